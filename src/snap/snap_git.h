/*
 * snap_git.h - libgit2 for the snapshot code, loaded when the server first
 * opens a store (dlopen of the libgit2 the headers belong to), not linked into
 * corral: every corral process (each client, each session's init, each
 * shell hook call) would otherwise load libgit2 and what it links (TLS,
 * SSH, Kerberos libraries) at start, several times slower.  The types and
 * macros are libgit2's own headers'; each function used is a pointer of
 * the function's own type, which the names below stand for.
 *
 * Every git_* function the snapshot code (and its tests) calls must be in
 * SNAP_GIT_FUNCTIONS and have its #define here: a missing one fails to
 * link, so it cannot be forgotten silently.
 *
 * Included only in src/snap/.
 */
#ifndef CORRAL_SNAP_GIT_H
#define CORRAL_SNAP_GIT_H

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>
#include <git2/sys/repository.h>
#include <stddef.h>

#define SNAP_GIT_FUNCTIONS(X) \
    X(git_blob_free) \
    X(git_blob_lookup) \
    X(git_blob_rawcontent) \
    X(git_blob_rawsize) \
    X(git_buf_dispose) \
    X(git_commit_create) \
    X(git_commit_free) \
    X(git_commit_lookup) \
    X(git_commit_message) \
    X(git_commit_tree) \
    X(git_commit_tree_id) \
    X(git_config_free) \
    X(git_config_open_level) \
    X(git_config_set_bool) \
    X(git_config_set_int32) \
    X(git_diff_find_options_init) \
    X(git_diff_find_similar) \
    X(git_diff_free) \
    X(git_diff_get_delta) \
    X(git_diff_get_stats) \
    X(git_diff_index_to_workdir) \
    X(git_diff_num_deltas) \
    X(git_diff_options_init) \
    X(git_diff_print) \
    X(git_diff_stats_free) \
    X(git_diff_stats_to_buf) \
    X(git_diff_tree_to_tree) \
    X(git_error_clear) \
    X(git_error_last) \
    X(git_ignore_path_is_ignored) \
    X(git_index_add) \
    X(git_index_add_bypath) \
    X(git_index_clear) \
    X(git_index_entrycount) \
    X(git_index_free) \
    X(git_index_get_byindex) \
    X(git_index_get_bypath) \
    X(git_index_open) \
    X(git_index_read) \
    X(git_index_read_tree) \
    X(git_index_remove_bypath) \
    X(git_index_write) \
    X(git_index_write_tree) \
    X(git_index_write_tree_to) \
    X(git_libgit2_init) \
    X(git_libgit2_opts) \
    X(git_mempack_new) \
    X(git_odb_add_backend) \
    X(git_odb_add_disk_alternate) \
    X(git_odb_exists) \
    X(git_odb_free) \
    X(git_odb_hash) \
    X(git_odb_new) \
    X(git_odb_object_free) \
    X(git_odb_read) \
    X(git_odb_read_header) \
    X(git_odb_refresh) \
    X(git_odb_write) \
    X(git_oid_cpy) \
    X(git_oid_equal) \
    X(git_oid_fromstr) \
    X(git_oid_is_zero) \
    X(git_oid_tostr) \
    X(git_packbuilder_free) \
    X(git_packbuilder_insert) \
    X(git_packbuilder_insert_walk) \
    X(git_packbuilder_name) \
    X(git_packbuilder_new) \
    X(git_packbuilder_object_count) \
    X(git_packbuilder_set_threads) \
    X(git_packbuilder_write) \
    X(git_patch_free) \
    X(git_patch_from_diff) \
    X(git_patch_get_delta) \
    X(git_patch_line_stats) \
    X(git_patch_print) \
    X(git_refdb_compress) \
    X(git_refdb_free) \
    X(git_reference_create) \
    X(git_reference_delete) \
    X(git_reference_free) \
    X(git_reference_iterator_free) \
    X(git_reference_iterator_glob_new) \
    X(git_reference_lookup) \
    X(git_reference_next) \
    X(git_reference_target) \
    X(git_repository_config) \
    X(git_repository_free) \
    X(git_repository_init_ext) \
    X(git_repository_init_options_init) \
    X(git_repository_odb) \
    X(git_repository_open_bare) \
    X(git_repository_refdb) \
    X(git_repository_set_index) \
    X(git_repository_set_workdir) \
    X(git_repository_wrap_odb) \
    X(git_revwalk_free) \
    X(git_revwalk_new) \
    X(git_revwalk_push_glob) \
    X(git_signature_free) \
    X(git_signature_now) \
    X(git_tree_entry_byindex) \
    X(git_tree_entry_bypath) \
    X(git_tree_entry_filemode) \
    X(git_tree_entry_free) \
    X(git_tree_entry_id) \
    X(git_tree_entry_type) \
    X(git_tree_entrycount) \
    X(git_tree_free) \
    X(git_tree_id) \
    X(git_tree_lookup)

#define SNAP_GIT_DECLARE(name) extern __typeof__(name) *snap_git_##name;
SNAP_GIT_FUNCTIONS(SNAP_GIT_DECLARE)
#undef SNAP_GIT_DECLARE

/* Load libgit2 (once; thread-safe): 0, or -1 with why in err.  The
 * server calls it when a workspace's store is first opened (a worker
 * thread), not when it starts: a server with no snapshot to take never
 * maps libgit2 and what it links. */
int snap_git_load(char *err, size_t errlen);

#ifndef SNAP_GIT_LOADER
#define git_blob_free (*snap_git_git_blob_free)
#define git_blob_lookup (*snap_git_git_blob_lookup)
#define git_blob_rawcontent (*snap_git_git_blob_rawcontent)
#define git_blob_rawsize (*snap_git_git_blob_rawsize)
#define git_buf_dispose (*snap_git_git_buf_dispose)
#define git_commit_create (*snap_git_git_commit_create)
#define git_commit_free (*snap_git_git_commit_free)
#define git_commit_lookup (*snap_git_git_commit_lookup)
#define git_commit_message (*snap_git_git_commit_message)
#define git_commit_tree (*snap_git_git_commit_tree)
#define git_commit_tree_id (*snap_git_git_commit_tree_id)
#define git_config_free (*snap_git_git_config_free)
#define git_config_open_level (*snap_git_git_config_open_level)
#define git_config_set_bool (*snap_git_git_config_set_bool)
#define git_config_set_int32 (*snap_git_git_config_set_int32)
#define git_diff_find_options_init (*snap_git_git_diff_find_options_init)
#define git_diff_find_similar (*snap_git_git_diff_find_similar)
#define git_diff_free (*snap_git_git_diff_free)
#define git_diff_get_delta (*snap_git_git_diff_get_delta)
#define git_diff_get_stats (*snap_git_git_diff_get_stats)
#define git_diff_index_to_workdir (*snap_git_git_diff_index_to_workdir)
#define git_diff_num_deltas (*snap_git_git_diff_num_deltas)
#define git_diff_options_init (*snap_git_git_diff_options_init)
#define git_diff_print (*snap_git_git_diff_print)
#define git_diff_stats_free (*snap_git_git_diff_stats_free)
#define git_diff_stats_to_buf (*snap_git_git_diff_stats_to_buf)
#define git_diff_tree_to_tree (*snap_git_git_diff_tree_to_tree)
#define git_error_clear (*snap_git_git_error_clear)
#define git_error_last (*snap_git_git_error_last)
#define git_ignore_path_is_ignored (*snap_git_git_ignore_path_is_ignored)
#define git_index_add (*snap_git_git_index_add)
#define git_index_add_bypath (*snap_git_git_index_add_bypath)
#define git_index_clear (*snap_git_git_index_clear)
#define git_index_entrycount (*snap_git_git_index_entrycount)
#define git_index_free (*snap_git_git_index_free)
#define git_index_get_byindex (*snap_git_git_index_get_byindex)
#define git_index_get_bypath (*snap_git_git_index_get_bypath)
#define git_index_open (*snap_git_git_index_open)
#define git_index_read (*snap_git_git_index_read)
#define git_index_read_tree (*snap_git_git_index_read_tree)
#define git_index_remove_bypath (*snap_git_git_index_remove_bypath)
#define git_index_write (*snap_git_git_index_write)
#define git_index_write_tree (*snap_git_git_index_write_tree)
#define git_index_write_tree_to (*snap_git_git_index_write_tree_to)
#define git_libgit2_init (*snap_git_git_libgit2_init)
#define git_libgit2_opts (*snap_git_git_libgit2_opts)
#define git_mempack_new (*snap_git_git_mempack_new)
#define git_odb_add_backend (*snap_git_git_odb_add_backend)
#define git_odb_add_disk_alternate (*snap_git_git_odb_add_disk_alternate)
#define git_odb_exists (*snap_git_git_odb_exists)
#define git_odb_free (*snap_git_git_odb_free)
#define git_odb_hash (*snap_git_git_odb_hash)
#define git_odb_new (*snap_git_git_odb_new)
#define git_odb_object_free (*snap_git_git_odb_object_free)
#define git_odb_read (*snap_git_git_odb_read)
#define git_odb_read_header (*snap_git_git_odb_read_header)
#define git_odb_refresh (*snap_git_git_odb_refresh)
#define git_odb_write (*snap_git_git_odb_write)
#define git_oid_cpy (*snap_git_git_oid_cpy)
#define git_oid_equal (*snap_git_git_oid_equal)
#define git_oid_fromstr (*snap_git_git_oid_fromstr)
#define git_oid_is_zero (*snap_git_git_oid_is_zero)
#define git_oid_tostr (*snap_git_git_oid_tostr)
#define git_packbuilder_free (*snap_git_git_packbuilder_free)
#define git_packbuilder_insert (*snap_git_git_packbuilder_insert)
#define git_packbuilder_insert_walk (*snap_git_git_packbuilder_insert_walk)
#define git_packbuilder_name (*snap_git_git_packbuilder_name)
#define git_packbuilder_new (*snap_git_git_packbuilder_new)
#define git_packbuilder_object_count (*snap_git_git_packbuilder_object_count)
#define git_packbuilder_set_threads (*snap_git_git_packbuilder_set_threads)
#define git_packbuilder_write (*snap_git_git_packbuilder_write)
#define git_patch_free (*snap_git_git_patch_free)
#define git_patch_from_diff (*snap_git_git_patch_from_diff)
#define git_patch_get_delta (*snap_git_git_patch_get_delta)
#define git_patch_line_stats (*snap_git_git_patch_line_stats)
#define git_patch_print (*snap_git_git_patch_print)
#define git_refdb_compress (*snap_git_git_refdb_compress)
#define git_refdb_free (*snap_git_git_refdb_free)
#define git_reference_create (*snap_git_git_reference_create)
#define git_reference_delete (*snap_git_git_reference_delete)
#define git_reference_free (*snap_git_git_reference_free)
#define git_reference_iterator_free (*snap_git_git_reference_iterator_free)
#define git_reference_iterator_glob_new (*snap_git_git_reference_iterator_glob_new)
#define git_reference_lookup (*snap_git_git_reference_lookup)
#define git_reference_next (*snap_git_git_reference_next)
#define git_reference_target (*snap_git_git_reference_target)
#define git_repository_config (*snap_git_git_repository_config)
#define git_repository_free (*snap_git_git_repository_free)
#define git_repository_init_ext (*snap_git_git_repository_init_ext)
#define git_repository_init_options_init (*snap_git_git_repository_init_options_init)
#define git_repository_odb (*snap_git_git_repository_odb)
#define git_repository_open_bare (*snap_git_git_repository_open_bare)
#define git_repository_refdb (*snap_git_git_repository_refdb)
#define git_repository_set_index (*snap_git_git_repository_set_index)
#define git_repository_set_workdir (*snap_git_git_repository_set_workdir)
#define git_repository_wrap_odb (*snap_git_git_repository_wrap_odb)
#define git_revwalk_free (*snap_git_git_revwalk_free)
#define git_revwalk_new (*snap_git_git_revwalk_new)
#define git_revwalk_push_glob (*snap_git_git_revwalk_push_glob)
#define git_signature_free (*snap_git_git_signature_free)
#define git_signature_now (*snap_git_git_signature_now)
#define git_tree_entry_byindex (*snap_git_git_tree_entry_byindex)
#define git_tree_entry_bypath (*snap_git_git_tree_entry_bypath)
#define git_tree_entry_filemode (*snap_git_git_tree_entry_filemode)
#define git_tree_entry_free (*snap_git_git_tree_entry_free)
#define git_tree_entry_id (*snap_git_git_tree_entry_id)
#define git_tree_entry_type (*snap_git_git_tree_entry_type)
#define git_tree_entrycount (*snap_git_git_tree_entrycount)
#define git_tree_free (*snap_git_git_tree_free)
#define git_tree_id (*snap_git_git_tree_id)
#define git_tree_lookup (*snap_git_git_tree_lookup)
#endif

#endif
