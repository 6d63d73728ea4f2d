"""The documented size limits of what agents read (docs/questions.md, "Limits").

Kept apart, with no imports, so that the question readers and the offline model
share one number.
"""

#: The longest question graphtrail accepts (characters): far above any real question, far below
#: what would make an agent's prompt, a span or a report unreasonable. The offline model reads at
#: most this much of a question.
MAX_QUESTION_CHARS = 16_384
#: The longest line of a questions file (a question plus its answers and metadata), in bytes.
MAX_LINE_BYTES = 1 << 20
#: The largest questions file written as one JSON array (it must be parsed whole), in bytes.
MAX_ARRAY_BYTES = 64 << 20
