package graphtrail;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.SettingValueParsers;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.harness.Neo4j;
import org.neo4j.harness.Neo4jBuilders;

/**
 * Starts a real Neo4j (the official test harness, in-process) for graphtrail's tests.
 *
 * <p>Bolt listens on 127.0.0.1 only, on a free port, with authentication disabled; HTTP is off.
 * Once Bolt accepts connections the launcher prints one line, {@code bolt://127.0.0.1:PORT},
 * on stdout, then stays up until its stdin closes (the test process ended, however it ended)
 * or it is killed. The database lives in a temporary folder that is deleted on exit.
 *
 * <p>Usage: {@code java [-Dgraphtrail.neo4j.pagecache=SIZE] -cp CLASSPATH graphtrail.Neo4jLauncher [PORT]}
 * (PORT 0 or none: pick one).
 *
 * <p>The page cache is 64 MB unless the system property {@code graphtrail.neo4j.pagecache} says
 * otherwise (Neo4j's own size syntax: {@code 512m}, {@code 2g}): small, so the tests' many small
 * graphs start fast, while a benchmark can give a large graph the cache a production server
 * would have. The heap is the JVM's ({@code -Xmx}). Both, and the database's home folder, are
 * reported in one line on stderr at start.
 */
public final class Neo4jLauncher {
    /** System property holding the page cache size; absent means {@link #DEFAULT_PAGECACHE}. */
    static final String PAGECACHE_PROPERTY = "graphtrail.neo4j.pagecache";

    static final String DEFAULT_PAGECACHE = "64m";

    private Neo4jLauncher() {}

    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        if (port == 0) {
            port = freeLoopbackPort();
        }
        String pagecacheText = System.getProperty(PAGECACHE_PROPERTY, DEFAULT_PAGECACHE);
        long pagecache = SettingValueParsers.BYTES.parse(pagecacheText);
        Path home = Files.createTempDirectory("graphtrail-neo4j-");
        System.err.printf("graphtrail.Neo4jLauncher: page cache %s (%d bytes), max heap %d bytes, home %s%n",
                pagecacheText, pagecache, Runtime.getRuntime().maxMemory(), home);
        Neo4j neo4j = Neo4jBuilders.newInProcessBuilder(home)
                .withDisabledServer()
                .withConfig(BoltConnector.enabled, true)
                .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .withConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .withConfig(HttpConnector.enabled, false)
                .withConfig(HttpsConnector.enabled, false)
                .withConfig(GraphDatabaseSettings.auth_enabled, false)
                .withConfig(GraphDatabaseSettings.pagecache_memory, pagecache)
                .build();
        Runtime.getRuntime().addShutdownHook(new Thread(neo4j::close));
        System.out.println(neo4j.boltURI());
        System.out.flush();
        waitForStdinToClose(System.in);
        neo4j.close();
        System.exit(0);
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static void waitForStdinToClose(InputStream in) {
        byte[] buffer = new byte[256];
        try {
            while (in.read(buffer) >= 0) {
                // discard: only the end of the stream matters
            }
        } catch (IOException ignored) {
            // a broken pipe means the parent is gone: shut down just the same
        }
    }
}
