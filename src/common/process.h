/* The life of the process as every layer sees it: its start, the thread-exit hook, the path to
 * a fatal report. Defined by the process layer (src/process/), which the lower layers call
 * through these declarations only. */
#ifndef FA_PROCESS_H
#define FA_PROCESS_H

#include <stdbool.h>

extern bool _fa_started; /* our constructor ran: threads may be created, environ is read */
/* Once per process, at its first allocation call or our constructor: options, secrets, mode,
 * trace, fork handlers. Safe before main (no malloc, no stdio); cheap once done. */
void _fa_process_init(void);
/* The calling thread's exit runs the exit hooks of every layer (process/thread_exit.c). */
void _fa_thread_watch_exit(void);
/* Before a fatal report's abort: what must be written out is written (the trace). */
void _fa_process_fatal(void);

#endif
