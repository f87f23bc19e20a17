/* Unit tests for the process store: id reservation and Codex's prune
 * decision (8 most recent protected, exited before live, LRU first), plus
 * corral's pinned entries. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "server/store.h"

/* n entries with ids 1000.., last_used 1..n (entry i used at time i+1). */
static store_meta *make_meta(size_t n)
{
    store_meta *m = calloc(n, sizeof *m);
    for (size_t i = 0; i < n; i++) {
        m[i].id = 1000 + (int)i;
        m[i].last_used = i + 1;
    }
    return m;
}

static void prune_picks_least_recent_live(void **state)
{
    (void)state;
    store_meta *m = make_meta(64);
    assert_int_equal(store_pick_prune(m, 64), 0);
    free(m);
}

static void prune_prefers_exited_even_if_newer(void **state)
{
    (void)state;
    store_meta *m = make_meta(64);
    m[40].exited = true;
    m[50].exited = true;
    /* The least recently used exited one, although live ones are older. */
    assert_int_equal(store_pick_prune(m, 64), 40);
    free(m);
}

static void prune_never_touches_the_8_most_recent(void **state)
{
    (void)state;
    store_meta *m = make_meta(64);
    /* Only the 8 newest have exited: they are protected, so a live one goes. */
    for (int i = 56; i < 64; i++)
        m[i].exited = true;
    assert_int_equal(store_pick_prune(m, 64), 0);
    /* A ninth exited entry just below them is fair game. */
    m[55].exited = true;
    assert_int_equal(store_pick_prune(m, 64), 55);
    free(m);
}

static void prune_follows_last_used_not_position(void **state)
{
    (void)state;
    store_meta *m = make_meta(64);
    m[0].last_used = 1000; /* the oldest entry was just used */
    assert_int_equal(store_pick_prune(m, 64), 1);
    free(m);
}

static void prune_skips_pinned(void **state)
{
    (void)state;
    store_meta *m = make_meta(64);
    m[0].pinned = true;
    m[1].pinned = true;
    assert_int_equal(store_pick_prune(m, 64), 2);
    m[30].exited = true;
    m[30].pinned = true;
    assert_int_equal(store_pick_prune(m, 64), 2);
    free(m);
}

static void prune_none_when_all_protected(void **state)
{
    (void)state;
    store_meta *m = make_meta(8);
    assert_int_equal(store_pick_prune(m, 8), -1);
    assert_int_equal(store_pick_prune(m, 0), -1);
    free(m);
    m = make_meta(10);
    m[0].pinned = m[1].pinned = true;
    assert_int_equal(store_pick_prune(m, 10), -1);
    free(m);
}

static void ids_are_random_in_range_and_unique(void **state)
{
    (void)state;
    store_t *s = calloc(1, sizeof *s);
    store_init(s);
    int seen_low = 0, seen_high = 0;
    for (int i = 0; i < 2000; i++) {
        int id = store_reserve_id(s);
        assert_true(id >= STORE_ID_MIN && id < STORE_ID_END);
        assert_true(store_id_reserved(s, id));
        seen_low |= id < 50000;
        seen_high |= id >= 50000;
    }
    assert_true(seen_low && seen_high);
    assert_int_equal(s->reserved_count, 2000);
    store_free(s);
    free(s);
}

static void released_ids_come_back_sequentially(void **state)
{
    (void)state;
    store_t *s = calloc(1, sizeof *s);
    store_init(s);
    s->sequential_ids = true;
    assert_int_equal(store_reserve_id(s), 1000);
    assert_int_equal(store_reserve_id(s), 1001);
    assert_int_equal(store_reserve_id(s), 1002);
    store_release_id(s, 1001);
    assert_false(store_id_reserved(s, 1001));
    assert_int_equal(store_reserve_id(s), 1001);
    store_free(s);
    free(s);
}

static void add_remove_get(void **state)
{
    (void)state;
    store_t *s = calloc(1, sizeof *s);
    store_init(s);
    int a = store_reserve_id(s), b = store_reserve_id(s);
    int x = 1, y = 2;
    store_add(s, a, &x);
    store_add(s, b, &y);
    assert_int_equal(store_len(s), 2);
    assert_ptr_equal(store_get(s, b), &y);
    assert_ptr_equal(store_remove(s, a), &x);
    assert_false(store_id_reserved(s, a)); /* removal gives the id back */
    assert_null(store_get(s, a));
    assert_null(store_remove(s, a));
    assert_int_equal(store_len(s), 1);
    store_free(s);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(prune_picks_least_recent_live),
        cmocka_unit_test(prune_prefers_exited_even_if_newer),
        cmocka_unit_test(prune_never_touches_the_8_most_recent),
        cmocka_unit_test(prune_follows_last_used_not_position),
        cmocka_unit_test(prune_skips_pinned),
        cmocka_unit_test(prune_none_when_all_protected),
        cmocka_unit_test(ids_are_random_in_range_and_unique),
        cmocka_unit_test(released_ids_come_back_sequentially),
        cmocka_unit_test(add_remove_get),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
