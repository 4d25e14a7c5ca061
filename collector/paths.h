/*
 * paths.h - the names of the files the library writes and the mxprof
 * command looks for (paths.c), shared by both.
 */
#ifndef MXPROF_PATHS_H
#define MXPROF_PATHS_H

#include <stddef.h>

/* ---- file names (paths.c; also used by the mxprof command) ----------- */

/*
 * The library writes, and the mxprof command looks for, these names; both
 * take them from here. X is the trace's name without its ending: ".gz",
 * then ".json", each only when something other than '/' precedes it, with
 * their case ("t.json", "t.json.gz" and "t.gz" give "t"; "t", "t.JSON" and
 * "a.b/t" are their own X). Each function writes into buf and returns 0,
 * or -ENAMETOOLONG when the name does not fit in len bytes (buf is then
 * ""). None allocates or takes a lock: safe after fork, not in a signal
 * handler (snprintf).
 */

/* Returns the length of X in the trace path trace: trace[0..X) is the
 * name, the rest its ending ("", ".gz", ".json" or ".json.gz"). This
 * function can't fail. */
size_t paths_stem_len(const char *trace);

/* Writes the tables path of the trace path trace: "X.stats.txt". */
int paths_stats(const char *trace, char *buf, size_t len);

/* Writes the path of the text of every thread's stack beside the trace
 * path trace: "X.stacks.txt". */
int paths_stacks_text(const char *trace, char *buf, size_t len);

/* Writes the journal path of the trace path trace: the whole name with
 * ".journal" added ("t.json.gz.journal"). */
int paths_journal(const char *trace, char *buf, size_t len);

/* Writes the trace path whose journal is journal: journal without its
 * ".journal" ending. Returns -EINVAL (buf "") when journal does not end in
 * ".journal" after at least one byte. */
int paths_journal_trace(const char *journal, char *buf, size_t len);

/* Writes the trace path of a descendant: "X.<tag>" with the trace's ending
 * after it ("t.json.gz" and tag "123" give "t.123.json.gz"; "t" gives
 * "t.123"). The library's tag is the pid; a glob such as "[0-9]*" finds
 * them all. */
int paths_child(const char *trace, const char *tag, char *buf, size_t len);

/*
 * While a process records, its status file, /tmp/mxprof-<uid>/<pid>.status
 * (or $XDG_RUNTIME_DIR/mxprof/<pid>.status when that is set), holds
 * "key=value" lines: output=<abs trace path>, stats=<abs tables path>,
 * signal=<dump signal number, 0 if none>, dumps=<completed dumps>,
 * taken=<the dump signal the program took over, 0 if none>, stacks=<texts
 * of every thread's stack written, paths_stacks_text()>. It is
 * rewritten atomically after every dump and removed at exit. `mxprof dump
 * PID` waits for dumps to grow. Writes the path of pid's status file.
 */
int paths_status(int pid, char *buf, size_t len);

/* Writes the temporary name of path for process pid, in the same folder:
 * "<path>.tmp.<pid>", or, when that name would pass NAME_MAX (a legal
 * name of 250 bytes), ".mxprof-<hash of the name>.tmp.<pid>". */
int paths_temp(const char *path, int pid, char *buf, size_t len);

/* Writes the folder that holds the status files of this user (the folder
 * of paths_status()). */
int paths_status_dir(char *buf, size_t len);

/*
 * Is dir a folder that only the user uid controls: a folder, not a
 * symbolic link, owned by uid, writable by no group and no other user?
 * Returns 0; else a negative errno with *why saying what is wrong in a
 * few words. The status folder is used only when it passes, by the
 * library (which creates it, mode 0700) and by `mxprof dump` (which then
 * trusts the status file it reads there).
 */
int paths_private_dir(const char *dir, unsigned uid, const char **why);

#endif /* MXPROF_PATHS_H */
