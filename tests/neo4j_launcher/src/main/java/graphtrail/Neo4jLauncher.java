package graphtrail;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;

import org.neo4j.configuration.GraphDatabaseSettings;
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
 * <p>Usage: {@code java -cp CLASSPATH graphtrail.Neo4jLauncher [PORT]} (0 or none: pick one).
 */
public final class Neo4jLauncher {
    private Neo4jLauncher() {}

    public static void main(String[] args) throws Exception {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        if (port == 0) {
            port = freeLoopbackPort();
        }
        Path home = Files.createTempDirectory("graphtrail-neo4j-");
        Neo4j neo4j = Neo4jBuilders.newInProcessBuilder(home)
                .withDisabledServer()
                .withConfig(BoltConnector.enabled, true)
                .withConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .withConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .withConfig(HttpConnector.enabled, false)
                .withConfig(HttpsConnector.enabled, false)
                .withConfig(GraphDatabaseSettings.auth_enabled, false)
                .withConfig(GraphDatabaseSettings.pagecache_memory, 64L * 1024 * 1024)
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
