/* What the process layer's files share. */
#ifndef FA_PROCESS_INTERNAL_H
#define FA_PROCESS_INTERNAL_H

/* thread_exit.c: set the hook up, once, at process start. */
void _fa_thread_exit_init(void);

#endif
