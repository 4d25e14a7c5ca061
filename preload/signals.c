/*
 * signals.c - the dump signal, and the final dump for signals that end the
 * process.
 *
 * The dump signal is taken by the drain thread alone: the loading thread
 * blocks it, the threads the program creates inherit that mask, and the
 * drain thread unblocks it for itself (drain.c). A dump therefore never
 * interrupts the program's sleep, poll, select or sem_timedwait. Its
 * handler is installed only where the disposition is the default; a
 * program that already handles the signal keeps it (one line, no dump
 * signal), and one that takes it over later gets it back the same way.
 *
 * `mxprof dump --stacks` sends the dump signal with a value
 * (SETTINGS_STACKS_REQUEST, sigqueue): the handler then also asks for every
 * thread's stack (signals_stacks_wanted, which threads_now.c reads).
 * threads_now.c samples running threads with a real-time signal of its own,
 * one whose disposition is the default (signals_stack_signal()); a program
 * that sets a handler for it later keeps it, and the next capture takes
 * another.
 *
 * Fatal signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT) whose disposition is the default get a handler that
 * asks the drain thread for the final dump (coll_finish_signal(), bounded
 * by FATAL_WAIT_MS), puts the default back and ends the process by the
 * same signal: a fault returns to the faulting instruction, which faults
 * again; a sent signal is sent again to this thread. The wait status, the
 * core dump included, is the one the signal would have given. A second
 * fatal signal while the first is handled does not change it: the first
 * one ends the process.
 *
 * sigaction(), signal() and bsd_signal() are wrapped so that the program
 * sees what it asked for: where it sets the default of a fatal signal (as
 * Python does before it re-raises SIGINT), mxprof's handler goes in its
 * place and the program is shown SIG_DFL; where it sets a handler of its
 * own, that handler replaces mxprof's and keeps precedence. A library
 * loaded late (dlopen) is not interposed: there the handlers go in at load
 * only, where the disposition is the default.
 *
 * The shown dispositions are kept without a lock: sigaction() is called
 * from signal handlers. Two threads that change one signal's disposition
 * at the same time may be shown each other's flags.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "source.h"
#include "preload.h"

/* The longest the final dump may hold the ending process. */
#define FATAL_WAIT_MS 5000

#define EXPORT __attribute__((visibility("default")))

/* glibc's sigaction, under the name that is not wrapped. */
extern int __sigaction(int sig, const struct sigaction *act,
		       struct sigaction *old);

static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV,
				    SIGBUS, SIGFPE,  SIGILL, SIGABRT};

/* Per signal: the default's flags and mask as the program set them, shown
 * while mxprof's fatal handler stands for the default. */
static struct sigaction fatal_shown[NSIG];
static int fatal_armed; /* the fatal handlers are in use */
static int dump_sig;	/* atomic: the dump signal, 0 = none */

static int is_fatal(int sig)
{
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(int); i++) {
		if (fatal_signals[i] == sig) {
			return 1;
		}
	}
	return 0;
}

static void say(const char *s)
{
	ssize_t n = write(2, s, strlen(s));
	(void)n;
}

/* Ends the process by sig, with sig's default disposition. */
static void end_by(int sig, const siginfo_t *si)
{
	struct sigaction dfl = fatal_shown[sig];
	int hardware = si && si->si_code > 0 && sig != SIGINT &&
		       sig != SIGTERM && sig != SIGHUP && sig != SIGQUIT &&
		       sig != SIGABRT;
	uint64_t bit = 1ull << (sig - 1);

	dfl.sa_handler = SIG_DFL;
	dfl.sa_flags &= ~SA_SIGINFO;
	__sigaction(sig, &dfl, NULL);
	if (hardware) {
		/* Back to the instruction, which faults again. */
		return;
	}
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
	syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &bit, NULL, sizeof(bit));
}

/*
 * A fatal signal after the first, while the process ends by the first:
 * the first decides how it ends. On the thread that ends it (a signal
 * that came while it waits for the final dump, or one pending when it
 * returns to a faulting instruction) the handler returns; on another
 * thread it waits, and ends the process by its own signal only if the
 * first thread has not done so well after its own bound.
 */
static void after_first(int sig, const siginfo_t *si, int first, int me)
{
	struct timespec ts = {2 * FATAL_WAIT_MS / 1000, 0};

	if (first == me) {
		return;
	}
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
	end_by(sig, si);
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	static int ending_tid; /* atomic: the first fatal signal's thread */
	int saved = errno;
	int me = (int)syscall(SYS_gettid), first = 0;

	(void)uc;
	if (!__atomic_compare_exchange_n(&ending_tid, &first, me, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		after_first(sig, si, first, me);
		errno = saved;
		return;
	}
	int rc = coll_finish_signal(FATAL_WAIT_MS);
	if (rc == -ETIMEDOUT) {
		say("mxprof: the final dump did not finish within 5 s of a "
		    "signal that ends the process; ending without it (the "
		    "journal is kept for mxprof recover)\n");
	}
	end_by(sig, si);
	errno = saved;
}

int signals_stacks_wanted;
static int stack_sig; /* atomic: the stack signal, 0 = none yet */

/* The dump signal: a dump, and every thread's stack with it when `mxprof
 * dump --stacks` sent it (sigqueue with SETTINGS_STACKS_REQUEST). */
static void on_dump_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si && si->si_code == SI_QUEUE &&
	    si->si_value.sival_int == SETTINGS_STACKS_REQUEST) {
		__atomic_store_n(&signals_stacks_wanted, 1, __ATOMIC_RELEASE);
	}
	coll_dump_async();
}

int signals_stack_signal(void *fn)
{
	int sig = __atomic_load_n(&stack_sig, __ATOMIC_ACQUIRE);
	int dump = __atomic_load_n(&dump_sig, __ATOMIC_ACQUIRE);

	if (sig) {
		return sig;
	}
	for (int s = SIGRTMAX - 1; s >= SIGRTMIN + 4; s--) {
		struct sigaction cur, sa;
		if (s == dump || __sigaction(s, NULL, &cur) < 0 ||
		    cur.sa_handler != SIG_DFL) {
			continue;
		}
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = (void (*)(int, siginfo_t *, void *))fn;
		sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
		sigfillset(&sa.sa_mask);
		if (__sigaction(s, &sa, NULL) == 0) {
			__atomic_store_n(&stack_sig, s, __ATOMIC_RELEASE);
			return s;
		}
	}
	return -EBUSY;
}

/* mxprof's handler for a fatal signal, in place of act's SIG_DFL. */
static void fatal_action(const struct sigaction *act, struct sigaction *mine)
{
	memset(mine, 0, sizeof(*mine));
	mine->sa_sigaction = on_fatal;
	mine->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	if (act) {
		mine->sa_mask = act->sa_mask;
	} else {
		sigemptyset(&mine->sa_mask);
	}
}

/* The program takes the dump signal over: mxprof lets it go. */
static void release_dump_signal(int sig)
{
	uint64_t bit = 1ull << (sig - 1);

	if (!__atomic_compare_exchange_n(&dump_sig, &sig, 0, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		return;
	}
	__atomic_store_n(&coll_dump_signal, 0, __ATOMIC_RELEASE);
	syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &bit, NULL, sizeof(bit));
	say("mxprof: the program handles the dump signal; no dump signal "
	    "(use MXPROF_SIGNAL to choose another)\n");
}

EXPORT int sigaction(int sig, const struct sigaction *act,
		     struct sigaction *old)
{
	struct sigaction prev, mine;
	int dump = __atomic_load_n(&dump_sig, __ATOMIC_ACQUIRE);
	int fatal = sig > 0 && sig < NSIG && sig != dump && is_fatal(sig) &&
		    __atomic_load_n(&fatal_armed, __ATOMIC_ACQUIRE);
	int rc;

	if (!fatal) {
		if (act && sig > 0 && sig == dump &&
		    act->sa_sigaction != on_dump_signal) {
			release_dump_signal(sig);
		}
		if (act && sig > 0 &&
		    sig == __atomic_load_n(&stack_sig, __ATOMIC_ACQUIRE)) {
			/* The program's own use of the signal: the next
			 * capture takes another. */
			__atomic_store_n(&stack_sig, 0, __ATOMIC_RELEASE);
		}
		return __sigaction(sig, act, old);
	}
	struct sigaction shown = fatal_shown[sig];
	if (act && act->sa_handler == SIG_DFL) {
		fatal_action(act, &mine);
		rc = __sigaction(sig, &mine, &prev);
		if (rc == 0) {
			fatal_shown[sig] = *act;
		}
	} else {
		rc = __sigaction(sig, act, &prev);
	}
	if (rc == 0 && old) {
		*old = prev.sa_sigaction == on_fatal ? shown : prev;
	}
	return rc;
}

/* signal() as glibc's: BSD semantics (the signal blocked in its handler,
 * calls restarted). */
EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	if (sig > 0 && sig < NSIG) {
		sigaddset(&sa.sa_mask, sig);
	}
	sa.sa_flags = SA_RESTART;
	if (handler == SIG_ERR || sigaction(sig, &sa, &old) < 0) {
		errno = EINVAL;
		return SIG_ERR;
	}
	return old.sa_handler;
}

EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

/*
 * Installs the dump signal's handler where the disposition is the
 * default, and blocks it in this thread (and so in the threads created
 * from it). Returns 0, or -EBUSY after one line when the program handles
 * or ignores the signal.
 */
static int install_dump_signal(int sig)
{
	struct sigaction sa, cur;
	sigset_t set;

	if (__sigaction(sig, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL) {
		say("mxprof: the program already handles the dump signal; no "
		    "dump signal (use MXPROF_SIGNAL to choose another)\n");
		return -EBUSY;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_dump_signal;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (__sigaction(sig, &sa, NULL) < 0) {
		say("mxprof: cannot handle the dump signal; no dump signal\n");
		return -EINVAL;
	}
	sigemptyset(&set);
	sigaddset(&set, sig);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, NULL, sizeof(uint64_t));
	__atomic_store_n(&dump_sig, sig, __ATOMIC_RELEASE);
	__atomic_store_n(&coll_dump_signal, sig, __ATOMIC_RELEASE);
	return 0;
}

void signals_init(struct settings *s)
{
	if (s->signal && install_dump_signal(s->signal) < 0) {
		s->signal_taken = s->signal;
		s->signal = 0;
	}
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(int); i++) {
		int sig = fatal_signals[i];
		struct sigaction cur, mine;
		if (sig == s->signal || __sigaction(sig, NULL, &cur) < 0 ||
		    cur.sa_handler != SIG_DFL) {
			continue;
		}
		fatal_action(&cur, &mine);
		fatal_shown[sig] = cur;
		__sigaction(sig, &mine, NULL);
	}
	__atomic_store_n(&fatal_armed, 1, __ATOMIC_RELEASE);
}
