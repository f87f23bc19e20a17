/*
 * uexec.h - the agent-facing unified-exec contract, as pure functions: yield
 * clamping, the 4-bytes-per-token middle truncation and the reply envelope,
 * exactly as the Codex CLI does them,
 * so that an agent that knows one knows the other.
 *
 * Included by src/protocol/, src/record/, src/server/, src/snap/, src/gate/,
 * src/mcp/ and src/cli/.
 */
#ifndef CORRAL_UEXEC_H
#define CORRAL_UEXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UEXEC_MIN_YIELD_MS 250
#define UEXEC_MAX_YIELD_MS 30000
#define UEXEC_MIN_EMPTY_YIELD_MS 5000
#define UEXEC_MAX_BACKGROUND_TIMEOUT_MS 300000
#define UEXEC_DEFAULT_EXEC_YIELD_MS 10000
#define UEXEC_DEFAULT_WRITE_YIELD_MS 250
#define UEXEC_DEFAULT_MAX_TOKENS 10000
#define UEXEC_BYTES_PER_TOKEN 4
#define UEXEC_OUTPUT_MAX_BYTES (1024u * 1024u)
#define UEXEC_POST_WRITE_SETTLE_MS 100
#define UEXEC_POST_EXIT_CLOSE_WAIT_MS 50
#define UEXEC_TRAILING_OUTPUT_GRACE_MS 100

#define UEXEC_STDIN_CLOSED_MSG \
    "stdin is closed for this session; rerun exec_command with tty=true to keep stdin open"

/* exec_command: requested < 0 means "not given" (default 10000). */
uint32_t uexec_exec_yield(int64_t requested_ms);
/* write_stdin: requested < 0 means "not given" (default 250); an empty write
 * is a poll and clamps to 5000..max_background_ms (itself floored at 5000). */
uint32_t uexec_write_yield(int64_t requested_ms, bool empty, uint32_t max_background_ms);

/* ceil(bytes / 4). */
size_t uexec_approx_tokens(size_t bytes);

/* Bytes as text, invalid UTF-8 replaced by U+FFFD per maximal invalid
 * subpart (what Rust's String::from_utf8_lossy does).  Caller frees. */
char *uexec_lossy_utf8(const char *s, size_t len, size_t *out_len);

/* Keep a UTF-8-safe prefix and suffix of about max_tokens*4/2 bytes each,
 * joined by "…N tokens truncated…".  Returns a copy if it fits. */
char *uexec_truncate_middle(const char *s, size_t len, size_t max_tokens, size_t *out_len);

/* What the agent sees as Output: the text unchanged when it fits in
 * max_tokens, else a "Warning: truncated output (original token count: T)\n
 * Total output lines: L\n\n" header and the middle-truncated text. */
char *uexec_format_output(const char *s, size_t len, size_t max_tokens, size_t *out_len);

/* Six random lowercase hex digits. */
void uexec_chunk_id(char out[7]);

typedef struct uexec_reply {
    char chunk_id[7];
    double wall_time;   /* seconds */
    bool exited;
    int exit_code;      /* when exited */
    int session_id;     /* when running */
    size_t original_token_count;
    const char *output; /* already formatted by uexec_format_output */
    size_t output_len;
} uexec_reply;

/* "Chunk ID: …\nWall time: 0.1234 seconds\nProcess exited with code 0\n
 * Original token count: 1\nOutput:\n…".  Caller frees. */
char *uexec_envelope(const uexec_reply *r, size_t *out_len);

#endif
