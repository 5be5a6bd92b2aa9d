/* The environment the library sees in fitalloc-replay.
 *
 * fitalloc-replay is linked with the library, which reads its FITALLOC_* options from the
 * environment in a constructor, before main. Two of the caller's options would do harm there:
 * FITALLOC_TRACE creates (truncates) the file it names at start — the very trace about to be
 * replayed, if the variable was left exported after recording it — and the options that change
 * the engine (FITALLOC_MODE=lab, secure mode, purging) would change the engine row. So before
 * any constructor runs (an entry of .preinit_array), every FITALLOC_* variable is taken out of
 * the environment, except the two settings of an engine replay:
 *
 *   FITALLOC_PURGE_THREAD=0, FITALLOC_PURGE_DELAY=1000000000 (about eleven days)
 *
 * and, with --mesh, FITALLOC_MESH=1 (whose passes the engine backend then runs itself, one at
 * every sample point: without the purge thread, none runs on its own).
 *
 * Purging is driven by the clock, and the replay runs far faster than the program did: what a
 * purge delay returns during the replay would depend on the machine's speed, not on the
 * operations. These two can only be given to the library at its start, so an engine replay
 * that does not have them restarts the program once with them (replay_env_for_engine).
 */
#ifndef FA_REPLAY_ENV_H
#define FA_REPLAY_ENV_H

/* Return if the engine's settings are in effect; else re-execute this program with them
 * (warning and returning if that fails). */
void replay_env_for_engine(int argc, char **argv);

#endif
