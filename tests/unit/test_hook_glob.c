/*
 * test_hook_glob.c - MXPROF_HOOK's glob matcher (preload/hook_glob.c):
 * the patterns the presets use, the corners of bracket expressions and
 * escapes, and the same answer as fnmatch(pattern, name, 0) in the C
 * locale for random patterns and names over a small alphabet.
 */
#include <fnmatch.h>
#include <locale.h>

#include "testutil.h"

#include "hook.h"

static void test_hook_glob_matches_the_presets_patterns(void **state)
{
	(void)state;
	assert_int_equal(
		hook_glob_match("libtorch_cpu.so*", "libtorch_cpu.so.1.13.0"),
		1);
	assert_int_equal(hook_glob_match("_ZN2at4_ops*4callE*",
					 "_ZN2at4_ops4relu4callERKNS_6TensorE"),
			 1);
	assert_int_equal(hook_glob_match("_ZN2at4_ops*4callE*",
					 "_ZN2at4_ops4relu10redispatchE"),
			 0);
	assert_int_equal(hook_glob_match("lib*blas*.so*", "libopenblas.so.0"),
			 1);
	assert_int_equal(hook_glob_match("*gemm_", "sgemm_"), 1);
	assert_int_equal(hook_glob_match("*gemm_", "sgemm_small"), 0);
	assert_int_equal(hook_glob_match("cblas_*", "cblas_"), 1);
	assert_int_equal(hook_glob_match("", ""), 1);
	assert_int_equal(hook_glob_match("", "a"), 0);
	assert_int_equal(hook_glob_match("*", ""), 1);
	assert_int_equal(hook_glob_match("?", ""), 0);
}

static void test_hook_glob_brackets_and_escapes(void **state)
{
	(void)state;
	assert_int_equal(hook_glob_match("[a-c]x", "bx"), 1);
	assert_int_equal(hook_glob_match("[!a-c]x", "bx"), 0);
	assert_int_equal(hook_glob_match("[^a-c]x", "dx"), 1);
	assert_int_equal(hook_glob_match("[]]", "]"), 1);
	assert_int_equal(hook_glob_match("[!]]", "a"), 1);
	assert_int_equal(hook_glob_match("[a-]", "-"), 1);
	assert_int_equal(hook_glob_match("[[:digit:]]*", "7up"), 1);
	assert_int_equal(hook_glob_match("[[:digit:]]*", "up7"), 0);
	assert_int_equal(hook_glob_match("a[", "a["), 1); /* no ']' */
	assert_int_equal(hook_glob_match("\\*", "*"), 1);
	assert_int_equal(hook_glob_match("\\*", "a"), 0);
	assert_int_equal(hook_glob_match("a\\", "a\\"), 0);
	/* Bytes past ASCII are bytes: '?' takes one of a UTF-8 pair. */
	assert_int_equal(hook_glob_match("??", "\xc3\xa9"), 1);
}

/* A pattern or name of up to n bytes over alphabet a, from seed *x. */
static void random_text(char *out, int n, const char *a, unsigned *x)
{
	int len = (int)(rand_r(x) % (unsigned)(n + 1));
	size_t na = strlen(a);

	for (int i = 0; i < len; i++) {
		out[i] = a[rand_r(x) % na];
	}
	out[len] = 0;
}

/* Random patterns over pat_abc against random names over name_abc:
 * returns how many matched, failing at the first answer that differs
 * from fnmatch's. */
static int compare_random(const char *pat_abc, const char *name_abc, int n,
			  unsigned seed)
{
	char pat[16], name[16];
	int hits = 0;

	for (int i = 0; i < n; i++) {
		random_text(pat, 8, pat_abc, &seed);
		random_text(name, 8, name_abc, &seed);
		int want = fnmatch(pat, name, 0) == 0;
		int got = hook_glob_match(pat, name);
		if (want != got) {
			fail_msg("pattern '%s' name '%s': fnmatch %d, ours %d",
				 pat, name, want, got);
		}
		hits += got;
	}
	return hits;
}

static void test_hook_glob_agrees_with_fnmatch_in_the_c_locale(void **state)
{
	(void)state;
	setlocale(LC_ALL, "C");
	/* Brackets, classes and escapes, well and ill formed: the answers
	 * are mostly no, but thousands are yes. */
	assert_true(compare_random("ab*?[]!-\\:", "ab-]![\\", 200000, 12345) >
		    5000);
	/* Stars and question marks only: many matches, much backtracking. */
	assert_true(compare_random("ab*?", "ab", 200000, 54321) > 30000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hook_glob_matches_the_presets_patterns),
		cmocka_unit_test(test_hook_glob_brackets_and_escapes),
		cmocka_unit_test(
			test_hook_glob_agrees_with_fnmatch_in_the_c_locale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
