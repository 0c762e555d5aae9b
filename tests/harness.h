/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * harness.h - the tests' tiny framework: TEST(name) { ... } functions run
 * in file order by main(); CHECK* record a failure and go on (so one run
 * lists every broken rule); REQUIRE records a failure and ends the test
 * (for a step the rest cannot do without); SKIP_TEST(why) ends a test
 * that cannot run here, saying why.  The exit status is 1 when a test
 * failed, 77 (meson's SKIP) when every test that ran was skipped, else 0.
 * Arguments name the tests to run (all when none); a name that matches no
 * test exits 2 with a message naming it.
 */
#ifndef CLASSFS_TEST_HARNESS_H
#define CLASSFS_TEST_HARNESS_H

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

#define TEST_MAX 256
static struct test_case test_cases[TEST_MAX];
static int test_count, test_dropped;
static int test_failed_now, test_skipped_now;

/* a test past TEST_MAX is counted, and main() fails rather than skip it */
#define TEST(n)                                                                     \
	static void test_##n(void);                                                 \
	__attribute__((constructor)) static void register_##n(void)                \
	{                                                                           \
		if (test_count < TEST_MAX)                                          \
			test_cases[test_count++] = (struct test_case){ #n, test_##n }; \
		else                                                                \
			test_dropped++;                                             \
	}                                                                           \
	static void test_##n(void)

#define REQUIRE(cond)                                                                 \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "  %s:%d: REQUIRE(%s) failed, test ended\n",  \
				__FILE__, __LINE__, #cond);                           \
			test_failed_now = 1;                                          \
			return;                                                       \
		}                                                                     \
	} while (0)

#define SKIP_TEST(...)                                                                \
	do {                                                                          \
		printf("  skipped: ");                                                \
		printf(__VA_ARGS__);                                                  \
		printf("\n");                                                         \
		test_skipped_now = 1;                                                 \
		return;                                                               \
	} while (0)

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, \
				#cond);                                               \
			test_failed_now = 1;                                          \
		}                                                                     \
	} while (0)

#define CHECK_INT(a, b)                                                                   \
	do {                                                                              \
		long long _a = (long long)(a), _b = (long long)(b);                        \
		if (_a != _b) {                                                           \
			fprintf(stderr, "  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, \
				__LINE__, #a, _a, #b, _b);                                \
			test_failed_now = 1;                                              \
		}                                                                         \
	} while (0)

#define CHECK_STR(a, b)                                                                  \
	do {                                                                             \
		const char *_a = (a), *_b = (b);                                          \
		if (!_a || !_b || strcmp(_a, _b)) {                                       \
			fprintf(stderr, "  %s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, \
				__LINE__, #a, _a ? _a : "(null)", _b ? _b : "(null)");    \
			test_failed_now = 1;                                             \
		}                                                                        \
	} while (0)

/* a test binary may define its own main by defining TEST_NO_MAIN */
#ifndef TEST_NO_MAIN
int main(int argc, char **argv)
{
	int failed = 0, passed = 0, skipped = 0;

	if (test_dropped) {
		fprintf(stderr, "%d tests past TEST_MAX (%d) in harness.h: raise it\n",
			test_dropped, TEST_MAX);
		return 1;
	}
	/*
	 * NAME arguments run those tests only; a name that is none of them
	 * (a typo, a test renamed) is an error, not a run of nothing that
	 * passes
	 */
	for (int a = 1; a < argc; a++) {
		int found = 0;

		for (int i = 0; i < test_count && !found; i++)
			found = !strcmp(argv[a], test_cases[i].name);
		if (!found) {
			fprintf(stderr, "%s: no test named \"%s\" (the filter matches nothing)\n",
				argv[0], argv[a]);
			return 2;
		}
	}
	for (int i = 0; i < test_count; i++) {
		int chosen = argc == 1;

		for (int a = 1; a < argc && !chosen; a++)
			chosen = !strcmp(argv[a], test_cases[i].name);
		if (!chosen)
			continue;
		test_failed_now = test_skipped_now = 0;
		test_cases[i].fn();
		printf("%s %s\n", test_failed_now ? "FAIL" : test_skipped_now ? "skip" : "ok  ",
		       test_cases[i].name);
		fflush(stdout);
		if (test_failed_now)
			failed++;
		else if (test_skipped_now)
			skipped++;
		else
			passed++;
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	if (failed)
		return 1;
	return skipped && !passed ? 77 : 0;
}
#endif

#endif
