/*
 * collector.h - the collector's map: its faces, its files in the order
 * they build on each other, and who calls whom. It includes every face,
 * for the mxprof command and the tests; a file of the library includes
 * only the faces it uses.
 *
 * Nothing in collector/ knows about GPUs or hooking. Event sources (the
 * public API, hook trampolines, NVTX, a GPU activity source) fill a
 * struct coll_rec and call ring_push(); the drain thread moves records from
 * the per-thread rings into the journal (a binary file beside the trace,
 * the crash-safe record of the run) and into the aggregates. A dump turns
 * the journal into the Chrome trace and the aggregates into tables. After a
 * crash, recovery (recover.c, for the mxprof command) turns a journal left
 * behind into both.
 *
 *   source --ring_push--> ring (per thread, SPSC, bounded, lock-free)
 *          --drain thread--> journal (binary, append-only) --> Chrome trace
 *                        \-> aggregates ------------------------> tables
 *
 * Flight mode (MXPROF_FLIGHT, flight.c) keeps the journal's records in
 * memory instead, in segments of the newest window, bounded by
 * MXPROF_FLIGHT_MB; a trigger (trigger.c: the dump signal, a slow step,
 * a hang) or the program's end writes the window into a journal made for
 * that dump, and the same writers make the trace from it:
 *
 *          --drain thread--> flight.c (memory) --dump--> journal --> trace
 *                        \-> aggregates (the whole run) ----------> tables
 *
 * Who owns what. The drain thread owns the collector's state: the journal,
 * the aggregates, the thread names, the dumps and the state of every
 * source registered with coll_source_add() (a source's drain, tables and
 * trace callbacks run only there). Other threads ask: mxprof_dump(),
 * dumps(), a flush and the final dump post a request and wait for it; the
 * dump signal and continuous dumps only wake the thread. The owner lock
 * (LOCK_OWNER) is held for each pass and each dump, so that fork() finds
 * the state between two steps; when there is no drain thread (before
 * start, after the end, or in a forked child whose thread could not
 * start), the caller takes it and serves its own request. A source's flush
 * and tick run on the drain thread without any collector lock held.
 *
 * The faces (headers):
 *
 *   lock.h      the lock order of the whole library (every mutex)
 *   source.h    what event sources use: records, ring_push(), the string
 *               table, stacks, the clock, windows, a source's events and
 *               sections as structs the writers format, the source ops
 *               table
 *   control.h   the drain's face to the entry points: start, dumps,
 *               flushes, the ends, exec and fork
 *   paths.h     the names of the files written and looked for
 *   files.h     the readers' face: the aggregates and their tables,
 *               recovery, creating files, the JSON escaper
 *   output.h    a file being written (struct out), with ISA-L's header:
 *               only the files that open or allocate one include it
 *   internal.h  what the files of collector/ share (not files.h or
 *               output.h)
 *   drain.h     what the drain's own files share
 *
 * The files, each calling only files above it (the ring's pair aside),
 * in the order of a reading:
 *
 *   lock.c clock.c paths.c tally.c    leaves: they call no other file
 *   jpack.c out_fd.c sweep.c          leaves
 *   stepstat.c                        leaf: the step times in bounded
 *                                     memory (the Steps section's)
 *   cat.c strtab.c meta.c window.c    lock.c (window.c: clock.c)
 *   nest.c                            strtab.c (PyTorch's sections)
 *   out_pipe.c                        out_fd.c (the workers' writes)
 *   out.c                             out_pipe.c, out_fd.c, paths.c
 *   journal.c                         out.c, jpack.c, strtab.c, cat.c
 *   ring.c <-> threads.c              the rings and the thread names, a
 *                                     pair (ring.c: tally.c, clock.c;
 *                                     threads.c: journal.c)
 *   source.c                          ring.c
 *   steps.c                           ring.c, window.c, meta.c, strtab.c,
 *                                     tally.c: steps and step windows
 *   flight.c                          jpack.c, journal.c, clock.c:
 *                                     flight mode's window in memory
 *   agg.c                             nest.c, stepstat.c, strtab.c
 *   stacks.c                          strtab.c, out.c
 *   callstack.c                       stacks.c, strtab.c, out.c (the
 *                                     escaper): Kineto's "Call stack"
 *   cells.c                           out.c (the JSON escaper): the
 *                                     tables' cells
 *   table_rows.c                      cells.c: the sources' sections
 *   table_steps.c                     table_rows.c, stepstat.c: the
 *                                     Steps section
 *   table.c                           agg.c, strtab.c, cells.c,
 *                                     table_rows.c, table_steps.c, out.c
 *   step_pick.c                       journal.c, agg.c, stacks.c,
 *                                     strtab.c, steps.c: some steps of
 *                                     a recorded run, picked after it
 *   chrome_meta.c                     out.c: the trace's members around
 *                                     its events
 *   chrome.c                          journal.c, stacks.c, callstack.c,
 *                                     out.c, cat.c, step_pick.c,
 *                                     chrome_meta.c
 *   trace_event.c                     chrome.c, out.c: a source's events
 *                                     (struct coll_event) in the trace
 *   writer.c                          chrome.c, table.c: the formats
 *   recover.c                         journal.c, agg.c, writer.c
 *   dump.c                            writer.c, meta.c, journal.c,
 *                                     threads.c, ring.c, sweep.c, source.c,
 *                                     agg.c, flight.c, step_pick.c
 *   trigger.c                         dump.c, flight.c, meta.c, paths.c:
 *                                     flight mode's triggers and their
 *                                     numbered files
 *   drain.c                           dump.c, recover.c, ring.c, agg.c,
 *                                     stacks.c, meta.c, source.c, steps.c,
 *                                     flight.c, trigger.c, step_pick.c
 *   queue.c                           drain.c, dump.c, ring.c, out_pipe.c
 *   control.c                         queue.c, drain.c, table.c
 *   endings.c                         control.c, queue.c, drain.c,
 *                                     out.c (the temporary files)
 *   fork.c                            queue.c, drain.c, and every file
 *                                     with a lock (held across fork)
 *
 * Event sources (preload/, cupti/) include source.h and, for the life
 * cycle, control.h; the mxprof command includes this header.
 */
#ifndef MXPROF_COLLECTOR_H
#define MXPROF_COLLECTOR_H

#include "source.h"
#include "control.h"
#include "paths.h"
#include "files.h"
#include "output.h"

#endif /* MXPROF_COLLECTOR_H */
