/*
 * snap_treepack.c - see snap_treepack.h.
 */
#include "config.h"

#include "snap/snap_treepack.h"

#include "base/util.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* Every tree under root that the store lacks (those are in the mempack),
 * into pb.  A stack, not recursion: a workspace may nest deeper than a
 * thread's stack allows.  The trees the store has hold only trees it has. */
static int insert_new_trees(git_repository *wrap, git_odb *store, git_packbuilder *pb, const git_oid *root)
{
    size_t n = 0, cap = 64;
    git_oid *stack = xmalloc(cap * sizeof *stack);
    git_oid_cpy(&stack[n++], root);
    int rc = 0;
    while (rc == 0 && n > 0) {
        git_oid id;
        git_oid_cpy(&id, &stack[--n]);
        if (git_odb_exists(store, &id))
            continue;
        git_tree *t = NULL;
        if ((rc = git_tree_lookup(&t, wrap, &id)) < 0 || (rc = git_packbuilder_insert(pb, &id, NULL)) < 0) {
            git_tree_free(t);
            break;
        }
        for (size_t i = 0, count = git_tree_entrycount(t); i < count; i++) {
            const git_tree_entry *e = git_tree_entry_byindex(t, i);
            if (git_tree_entry_type(e) != GIT_OBJECT_TREE)
                continue;
            if (n == cap)
                stack = xrealloc(stack, (cap *= 2) * sizeof *stack);
            git_oid_cpy(&stack[n++], git_tree_entry_id(e));
        }
        git_tree_free(t);
    }
    free(stack);
    return rc;
}

int snap_treepack_write(snap_store *st, git_oid *tree, char *err, size_t errlen)
{
    git_odb *mem_odb = NULL, *odb = NULL;
    git_odb_backend *mem = NULL;
    git_repository *wrap = NULL;
    git_packbuilder *pb = NULL;
    char *objects = xasprintf("%s/objects", st->dir), *packs = xasprintf("%s/objects/pack", st->dir);
    const char *step = "set up";
    /* From write_tree on, the index's tree cache may name the new trees:
     * a failure then must not be retried as loose objects (the cache
     * would be trusted and nothing written). */
    bool cache_touched = false;
    /* The mempack takes the writes (the alternate, the store itself, is
     * only read): what write_tree finds already stored is not written. */
    int rc = git_odb_new(&mem_odb);
    if (rc == 0)
        rc = git_mempack_new(&mem);
    if (rc == 0 && (rc = git_odb_add_backend(mem_odb, mem, 1000)) < 0)
        mem->free(mem); /* not the database's yet */
    if (rc == 0)
        rc = git_odb_add_disk_alternate(mem_odb, objects);
    if (rc == 0)
        rc = git_repository_wrap_odb(&wrap, mem_odb);
    if (rc == 0)
        rc = git_repository_odb(&odb, st->repo);
    if (rc == 0) {
        step = "write";
        cache_touched = true;
        rc = git_index_write_tree_to(tree, st->index, wrap);
    }
    if (rc == 0) {
        step = "pack";
        rc = git_packbuilder_new(&pb, wrap);
    }
    if (rc == 0) {
        git_packbuilder_set_threads(pb, 0);
        rc = insert_new_trees(wrap, odb, pb, tree);
    }
    if (rc == 0 && git_packbuilder_object_count(pb) > 0)
        rc = git_packbuilder_write(pb, packs, 0, NULL, NULL);
    /* The store's own database sees the new pack from now on. */
    if (rc == 0)
        rc = git_odb_refresh(odb);
    if (rc < 0)
        snprintf(err, errlen, "cannot %s the snapshot's trees of %s as a pack: %s", step, st->ws, snap_git_error());
    git_packbuilder_free(pb);
    git_odb_free(odb);
    git_repository_free(wrap);
    git_odb_free(mem_odb);
    free(objects);
    free(packs);
    return rc == 0 ? 0 : cache_touched ? -2 : -1;
}
