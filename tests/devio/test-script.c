// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-script.c - the players of src/devio: umockdev's read/write
 * scripts on a socketpair and on a pty (replay, split writes, fuzz,
 * mismatches, timing, Q, escapes, bad files, stop), evemu event files
 * read back as struct input_event, a socket that plays a script to its
 * clients, and the script writer a recorder uses.  The scripts are
 * written here.  Times are checked from below only: a loaded machine
 * may be late, never early.
 */
#include <fcntl.h>
#include <linux/input.h>
#include <poll.h>
#include <pty.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "../harness.h"
#include "classfs-internal/devio.h"

/* how long a step may take before the test calls it hung (not a timing check) */
#define HANG_MS 10000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* read exactly @len bytes (or fewer at EOF/error/HANG_MS): the count */
static size_t read_n(int fd, void *buf, size_t len)
{
	size_t got = 0;
	long long end = now_ms() + HANG_MS;

	while (got < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = end - now_ms();
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			break;
		n = read(fd, (char *)buf + got, len - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* nothing to read within @ms */
static int quiet(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, ms) == 0;
}

static int expect(int fd, const char *want, size_t len)
{
	char buf[4096];

	return len <= sizeof(buf) && read_n(fd, buf, len) == len && !memcmp(buf, want, len);
}

/* a script played on one end of a socketpair; *@client is the other */
static int start_pair(const char *text, size_t len, const char *name, int sv[2],
		      struct cfs_player **p, char *msg, size_t msgsize)
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	return cfs_script_start(text, len, name, sv[1], p, msg, msgsize);
}

static void close_pair(int sv[2])
{
	close(sv[0]);
	close(sv[1]);
}

#define S(lit) lit, sizeof(lit) - 1

TEST(replay_read_write)
{
	char msg[512];
	struct cfs_player *p = NULL;
	int sv[2];

	REQUIRE(start_pair(S("# a greeting\nr 0 hello\nw 0 abc\n\nr 0 ok^J\n"), "greet", sv, &p,
			   msg, sizeof(msg)) == 0);
	CHECK(expect(sv[0], "hello", 5));
	CHECK(quiet(sv[0], 50));
	CHECK_INT(write(sv[0], "abc", 3), 3);
	CHECK(expect(sv[0], "ok\n", 3));
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	CHECK_STR(msg, "");
	/* waiting again says the same */
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	cfs_player_stop(p);
	/* the descriptor is still the caller's, with its flags */
	CHECK(fcntl(sv[1], F_GETFL) >= 0 && !(fcntl(sv[1], F_GETFL) & O_NONBLOCK));
	close_pair(sv);
}

TEST(split_write)
{
	char msg[512];
	struct cfs_player *p = NULL;
	int sv[2];

	REQUIRE(start_pair(S("w 0 split write\nr 10 ACK\nw 0 ab\nw 0 cd\nr 0 .\n"), "split", sv,
			   &p, msg, sizeof(msg)) == 0);
	CHECK_INT(write(sv[0], "split ", 6), 6);
	usleep(20000);
	CHECK(quiet(sv[0], 0));
	CHECK_INT(write(sv[0], "write", 5), 5);
	CHECK(expect(sv[0], "ACK", 3));
	/* two blocks written at once are taken apart */
	CHECK_INT(write(sv[0], "abcd", 4), 4);
	CHECK(expect(sv[0], ".", 1));
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	cfs_player_stop(p);
	close_pair(sv);
}

TEST(fuzz_accepts)
{
	char msg[512];
	struct cfs_player *p = NULL;
	int sv[2];

	/* umockdev's rule: differences * 100 <= fuzz * length */
	REQUIRE(start_pair(S("f 20 -\nw 0 aaaaaaaaaa\nw 0 bbbbbbbbbb\nr 0 OK\n"), "fuzzy", sv, &p,
			   msg, sizeof(msg)) == 0);
	CHECK_INT(write(sv[0], "axaaaaaaaa", 10), 10);
	CHECK_INT(write(sv[0], "b1b", 3), 3);
	CHECK_INT(write(sv[0], "bbbbb7b", 7), 7);
	CHECK(expect(sv[0], "OK", 2));
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	cfs_player_stop(p);
	close_pair(sv);
}

TEST(fuzz_rejects)
{
	char msg[512];
	struct cfs_player *p = NULL;
	int sv[2];

	/* 10% allowed, the second block differs in 2 of 10; f 0 ends the fuzz */
	REQUIRE(start_pair(S("f 10 -\nw 0 aaaaaaaaaa\nw 0 aaaaaaaaaa\nf 0 -\nw 0 zz\n"), "fz", sv,
			   &p, msg, sizeof(msg)) == 0);
	CHECK_INT(write(sv[0], "aaaaaaaaax", 10), 10);
	CHECK_INT(write(sv[0], "axxaaaaaaa", 10), 10);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "fz:3: expected 'aaaaaaaaaa' (10 bytes), got 'axx") == msg);
	CHECK(strstr(msg, "over the fuzz of 10%") != NULL);
	cfs_player_stop(p);
	close_pair(sv);

	REQUIRE(start_pair(S("f 50 -\nw 0 aa\nf 0 -\nw 0 zz\n"), "fz0", sv, &p, msg,
			   sizeof(msg)) == 0);
	CHECK_INT(write(sv[0], "ab", 2), 2);
	CHECK_INT(write(sv[0], "zy", 2), 2);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "fz0:4: expected 'zz'") == msg);
	cfs_player_stop(p);
	close_pair(sv);
}

TEST(mismatch_message)
{
	char msg[512];
	struct cfs_player *p = NULL;
	int sv[2];

	REQUIRE(start_pair(S("# greeter\nr 0 hi\nw 0 ^@abc^J\nr 0 never\n"), "greet.script", sv,
			   &p, msg, sizeof(msg)) == 0);
	CHECK(expect(sv[0], "hi", 2));
	CHECK_INT(write(sv[0], "\0abd\n", 5), 5);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), -EPROTO);
	fprintf(stderr, "  (the message: %s)\n", msg);
	CHECK(strstr(msg, "greet.script:3: expected '^@abc^J' (5 bytes), got '^@abd") == msg);
	CHECK(strstr(msg, "first difference at byte 3") != NULL);
	/* the player stopped there: 'r 0 never' is not played */
	CHECK(quiet(sv[0], 50));
	cfs_player_stop(p);
	close_pair(sv);

	/* a long block is cut in the message, never in an escape */
	{
		char text[700], junk[300];

		memcpy(text, "w 0 ", 4);
		for (int i = 0; i < 300; i++)
			memcpy(text + 4 + 2 * i, "^J", 2);
		text[604] = '\n';
		memset(junk, 'b', sizeof(junk));
		REQUIRE(start_pair(text, 605, "long", sv, &p, msg, sizeof(msg)) == 0);
		CHECK_INT(write(sv[0], junk, sizeof(junk)), sizeof(junk));
		CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), -EPROTO);
		CHECK(strstr(msg, "long:1: expected '^J^J") == msg);
		CHECK(strstr(msg, "^J...' (300 bytes), got 'bbb") != NULL);
		cfs_player_stop(p);
		close_pair(sv);
	}

	/* a first piece that differs fails at once, not when the rest comes */
	REQUIRE(start_pair(S("w 0 0123456789\n"), "early", sv, &p, msg, sizeof(msg)) == 0);
	CHECK_INT(write(sv[0], "01x", 3), 3);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "early:1: expected '0123456789' (10 bytes), "
			  "got '01x' (the first 3 bytes)") == msg);
	cfs_player_stop(p);
	close_pair(sv);
}

TEST(timing)
{
	char msg[512];
	struct cfs_player *p = NULL;
	long long t0 = now_ms(), ta, tb;
	int sv[2];

	REQUIRE(start_pair(S("r 100 a\nr 100 b\nw 5000 c\nr 0 d\n"), "slow", sv, &p, msg,
			   sizeof(msg)) == 0);
	CHECK(expect(sv[0], "a", 1));
	ta = now_ms();
	CHECK(expect(sv[0], "b", 1));
	tb = now_ms();
	CHECK(ta - t0 >= 100);
	CHECK(tb - t0 >= 200);
	/* a 'w' line's time is the recording's: nothing waits for it */
	CHECK_INT(write(sv[0], "c", 1), 1);
	CHECK(expect(sv[0], "d", 1));
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	cfs_player_stop(p);
	close_pair(sv);
}

TEST(quit)
{
	char msg[512];
	struct cfs_player *p = NULL;
	int sv[2];

	/* what follows Q is notes, not operations */
	REQUIRE(start_pair(S("r 0 x\nQ\nthis is a note: x y z\nw 0 never\n"), "q", sv, &p, msg,
			   sizeof(msg)) == 0);
	CHECK(expect(sv[0], "x", 1));
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	cfs_player_stop(p);
	close_pair(sv);

	/* a script that is all comments ends at once; a 'd' line is no data */
	REQUIRE(start_pair(S("# nothing\nd 0 /dev/hidraw5\n"), "empty", sv, &p, msg,
			   sizeof(msg)) == 0);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	CHECK(quiet(sv[0], 20));
	cfs_player_stop(p);
	close_pair(sv);
}

TEST(escapes)
{
	char out[64], text[2048];
	unsigned char all[256], got[256];
	struct cfs_player *p = NULL;
	char msg[512];
	size_t n;
	int sv[2];

	CHECK_INT(cfs_script_escape("\0\x1e^\0a", 5, out, sizeof(out)), 9);
	CHECK_STR(out, "^@^^^`^@a");
	cfs_script_escape("\x1f `~\x7f", 5, out, sizeof(out));
	CHECK_STR(out, "^_ `~\x7f");
	/* a cut never leaves half an escape */
	CHECK_INT(cfs_script_escape("ab\n", 3, out, 4), 4);
	CHECK_STR(out, "ab");
	CHECK_INT(cfs_script_escape("abc", 3, NULL, 0), 3);

	/* every byte value there and back */
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	n = (size_t)snprintf(text, sizeof(text), "r 0 ");
	n += cfs_script_escape(all, 256, text + n, sizeof(text) - n);
	n += (size_t)snprintf(text + n, sizeof(text) - n, "\nw 0 ");
	n += cfs_script_escape(all, 256, text + n, sizeof(text) - n);
	text[n++] = '\n';
	REQUIRE(n < sizeof(text));
	REQUIRE(start_pair(text, n, "bytes", sv, &p, msg, sizeof(msg)) == 0);
	CHECK_INT(read_n(sv[0], got, 256), 256);
	CHECK(!memcmp(got, all, 256));
	CHECK_INT(write(sv[0], all, 256), 256);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	cfs_player_stop(p);
	close_pair(sv);

	/* a script saved with CRLF line ends plays the same */
	REQUIRE(start_pair(S("# crlf\r\nr 0 ab\r\n\r\nw 0 c^M\r\n"), "crlf", sv, &p, msg,
			   sizeof(msg)) == 0);
	CHECK(expect(sv[0], "ab", 2));
	CHECK(quiet(sv[0], 20));
	CHECK_INT(write(sv[0], "c\r", 2), 2);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	cfs_player_stop(p);
	close_pair(sv);

	/* spaces are data: all of them after the one that ends the time */
	REQUIRE(start_pair(S("r 0  two  \nr 0\n"), "sp", sv, &p, msg, sizeof(msg)) == 0);
	CHECK(expect(sv[0], " two  ", 6));
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	cfs_player_stop(p);
	close_pair(sv);
}

TEST(bad_scripts)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "x 0 a\n", "bad.script:1: unknown operation 'x'" },
		{ "r 0 ok\nr abc\n", "bad.script:2: invalid time value 'abc'" },
		{ "r0 a\n", "bad.script:1: no space after the operation 'r'" },
		{ "# c\n\nf 101 -\n", "bad.script:3: fuzz percentage 101 is over 100" },
		{ "w 0 ab^\n", "bad.script:1: '^' at the end of the line" },
		{ "w 0 a^!b\n", "bad.script:1: invalid escape '^!'" },
		{ "r 0 a\n\n\nr 99999999999 a\n", "bad.script:4: invalid time value '99999999999'" },
		{ "r -5 a\n", "bad.script:1: invalid time value '-5'" },
		{ "r 5x a\n", "bad.script:1: invalid time value '5x'" },
		{ "\x01 0 a\n", "bad.script:1: unknown operation '\\x01'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cfs_player *p = NULL;
		char msg[256] = "";
		int r = cfs_script_start(bad[i].text, strlen(bad[i].text), "bad.script", -1, &p,
					 msg, sizeof(msg));

		CHECK_INT(r, -EINVAL);
		CHECK(p == NULL);
		if (strncmp(msg, bad[i].msg, strlen(bad[i].msg)))
			CHECK_STR(msg, bad[i].msg);
	}
}

TEST(stop_while_blocked)
{
	static char big[(1 << 20) + 4];
	struct cfs_player *p = NULL;
	char msg[512];
	long long t;
	int sv[2];

	/* waiting for the program's write */
	REQUIRE(start_pair(S("w 0 never\n"), "blocked", sv, &p, msg, sizeof(msg)) == 0);
	usleep(50000);
	t = now_ms();
	cfs_player_stop(p);
	CHECK(now_ms() - t < HANG_MS);
	CHECK(fcntl(sv[1], F_GETFD) >= 0);
	close_pair(sv);

	/* in a long delay */
	REQUIRE(start_pair(S("r 3600000 late\n"), "late", sv, &p, msg, sizeof(msg)) == 0);
	usleep(50000);
	t = now_ms();
	cfs_player_stop(p);
	CHECK(now_ms() - t < HANG_MS);
	CHECK(quiet(sv[0], 0));
	close_pair(sv);

	/* writing a block the program does not read (more than a socket holds) */
	memcpy(big, "r 0 ", 4);
	memset(big + 4, 'a', sizeof(big) - 4);
	REQUIRE(start_pair(big, sizeof(big), "big", sv, &p, msg, sizeof(msg)) == 0);
	usleep(50000);
	t = now_ms();
	cfs_player_stop(p);
	CHECK(now_ms() - t < HANG_MS);
	CHECK(!(fcntl(sv[1], F_GETFL) & O_NONBLOCK));
	close_pair(sv);
}

TEST(other_side_closes)
{
	struct cfs_player *p = NULL;
	char msg[512];
	int sv[2];

	REQUIRE(start_pair(S("r 0 hi\nw 0 abc\n"), "gone", sv, &p, msg, sizeof(msg)) == 0);
	CHECK(expect(sv[0], "hi", 2));
	CHECK_INT(write(sv[0], "ab", 2), 2);
	close(sv[0]);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), -EPIPE);
	CHECK(strstr(msg, "gone:2: the other side closed while 'c' was still expected") == msg);
	cfs_player_stop(p);
	close(sv[1]);

	/* an 'r' block nobody can read any more (no SIGPIPE kills the test) */
	REQUIRE(start_pair(S("r 50 late\n"), "gone2", sv, &p, msg, sizeof(msg)) == 0);
	close(sv[0]);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), -EPIPE);
	CHECK(strstr(msg, "gone2:1: cannot write the block") == msg);
	cfs_player_stop(p);
	close(sv[1]);
}

/* a pty as classfs makes an emulated node: raw, the master played on */
static int raw_pty(int *master, int *slave)
{
	struct termios t;

	if (openpty(master, slave, NULL, NULL, NULL) < 0)
		return -errno;
	tcgetattr(*master, &t);
	cfmakeraw(&t);
	tcsetattr(*master, TCSANOW, &t);
	return 0;
}

TEST(pty)
{
	struct cfs_player *p = NULL;
	char msg[512];
	int m, s;

	if (raw_pty(&m, &s))
		SKIP_TEST("no pty here: %s", strerror(errno));
	REQUIRE(cfs_script_start(S("r 10 ready^M^J\nw 0 ATI^M\nr 0 ^@^`bin^@\n"), "modem", m, &p,
				 msg, sizeof(msg)) == 0);
	CHECK(expect(s, "ready\r\n", 7));
	CHECK_INT(write(s, "AT", 2), 2);
	CHECK_INT(write(s, "I\r", 2), 2);
	CHECK(expect(s, "\0^bin\0", 6));
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	cfs_player_stop(p);
	close(s);
	close(m);

	/* the program closes its end early: the master reads EIO */
	REQUIRE(raw_pty(&m, &s) == 0);
	REQUIRE(cfs_script_start(S("w 0 abc\n"), "modem2", m, &p, msg, sizeof(msg)) == 0);
	CHECK_INT(write(s, "a", 1), 1);
	close(s);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), -EPIPE);
	cfs_player_stop(p);
	close(m);
}

TEST(evemu_events)
{
	static const char ev_text[] =
		"# EVEMU 1.3\n"
		"# device /dev/input/event7\n"
		"N: Made Up Mouse\n"
		"I: 0003 1234 5678 0111\n"
		"P: 00 00 00 00 00 00 00 00\n"
		"B: 00 0b 00 00 00 00 00 00 00\n"
		"A: 00 0 255 0 0 0\n"
		"################################\n"
		"#      Waiting for events      #\n"
		"################################\n"
		"E: 1234.500000 0000 0000 0\n"
		"E: 1234.650000 0002 0000 5  # comment\n"
		"# some comment\n"
		"E: 1234.649000 0002 0001 -11\t# back in time: at once\n"
		"E: 1235.200000 0001 0174 0001\t# EV_KEY / KEY_ZOOM 1\n";
	struct {
		long sec, usec;
		int type, code, value;
		long long after_ms;
	} want[] = {
		{ 1234, 500000, 0, 0, 0, 0 },
		{ 1234, 650000, 2, 0, 5, 150 },
		{ 1234, 649000, 2, 1, -11, 150 },
		{ 1235, 200000, 1, 0x174, 1, 700 },
	};
	struct cfs_player *p = NULL;
	char msg[512], node[64];
	long long t0 = now_ms();
	int sv[2];

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	REQUIRE(cfs_evemu_start(S(ev_text), "mouse.events", sv[1], &p, msg, sizeof(msg)) == 0);
	for (size_t i = 0; i < 4; i++) {
		struct input_event ev;

		REQUIRE(read_n(sv[0], &ev, sizeof(ev)) == sizeof(ev));
		CHECK_INT(ev.input_event_sec, want[i].sec);
		CHECK_INT(ev.input_event_usec, want[i].usec);
		CHECK_INT(ev.type, want[i].type);
		CHECK_INT(ev.code, want[i].code);
		CHECK_INT(ev.value, want[i].value);
		if (now_ms() - t0 < want[i].after_ms)
			CHECK_INT(now_ms() - t0, want[i].after_ms);
	}
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	CHECK(quiet(sv[0], 20));
	cfs_player_stop(p);
	close_pair(sv);

	CHECK_INT(cfs_evemu_node(S(ev_text), node, sizeof(node)), 0);
	CHECK_STR(node, "/dev/input/event7");
	CHECK_INT(cfs_evemu_node(S("E: 1.000000 0000 0000 0\n"), node, sizeof(node)), -ENOENT);

	/* bad lines name their line */
	CHECK_INT(cfs_evemu_start(S("# x\nE: 1.0 0001 0002 3\nX: what\n"), "bad.events", -1, &p,
				  msg, sizeof(msg)), -EINVAL);
	CHECK(strstr(msg, "bad.events:3: not an evemu line") == msg);
	CHECK_INT(cfs_evemu_start(S("E: 1.5 0001 zz 3\n"), "bad.events", -1, &p, msg,
				  sizeof(msg)), -EINVAL);
	CHECK(strstr(msg, "bad.events:1: invalid event") == msg);
	CHECK_INT(cfs_evemu_start(S("E: 1.1234567 0001 0001 3\n"), "bad.events", -1, &p, msg,
				  sizeof(msg)), -EINVAL);
	CHECK(strstr(msg, "bad.events:1: invalid time") == msg);
	CHECK_INT(cfs_evemu_start(S("E: 1.5 0001 0001 3 junk\n"), "bad.events", -1, &p, msg,
				  sizeof(msg)), -EINVAL);
	CHECK(strstr(msg, "bad.events:1: unexpected text") == msg);
}

TEST(evemu_stop)
{
	struct cfs_player *p = NULL;
	char msg[512];
	long long t;
	int sv[2];

	REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	REQUIRE(cfs_evemu_start(S("E: 1.000000 0001 0001 1\nE: 9999.000000 0001 0001 0\n"), "ev",
				sv[1], &p, msg, sizeof(msg)) == 0);
	CHECK_INT(read_n(sv[0], msg, sizeof(struct input_event)), sizeof(struct input_event));
	t = now_ms();
	cfs_player_stop(p);
	CHECK(now_ms() - t < HANG_MS);
	close_pair(sv);
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

TEST(socket_script)
{
	char dir[] = "/tmp/test-script.XXXXXX", path[64], msg[512], c;
	struct cfs_player *p = NULL, *q = NULL;
	struct stat st;
	long long t0 = now_ms();
	int fd, fd2;

	REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/chatter", dir);
	REQUIRE(cfs_socket_script_start(S("r 100 ready\nw 0 abc\nw 2 ^@defgh\nr 10 ^@response\n"),
					"chatter.script", path, &p, msg, sizeof(msg)) == 0);
	CHECK(stat(path, &st) == 0 && S_ISSOCK(st.st_mode));
	/* the path is taken */
	CHECK_INT(cfs_socket_script_start(S("r 0 x\n"), "x", path, &q, msg, sizeof(msg)),
		  -EADDRINUSE);

	fd = connect_to(path);
	REQUIRE(fd >= 0);
	CHECK(expect(fd, "ready", 5));
	CHECK(now_ms() - t0 >= 100);
	CHECK_INT(write(fd, "abc", 3), 3);
	CHECK_INT(write(fd, "\0defgh", 6), 6);
	CHECK(expect(fd, "\0response", 9));
	/* the end of the script ends the connection */
	CHECK_INT(read_n(fd, &c, 1), 0);
	close(fd);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);

	/* two clients at once, each from the start; one goes wrong */
	fd = connect_to(path);
	fd2 = connect_to(path);
	REQUIRE(fd >= 0 && fd2 >= 0);
	CHECK(expect(fd, "ready", 5));
	CHECK(expect(fd2, "ready", 5));
	CHECK_INT(write(fd2, "abX", 3), 3);
	CHECK_INT(write(fd, "abc", 3), 3);
	CHECK_INT(write(fd, "\0defgh", 6), 6);
	CHECK(expect(fd, "\0response", 9));
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), -EPROTO);
	CHECK(strstr(msg, "chatter.script:2: expected 'abc'") == msg);
	close(fd);
	close(fd2);

	/* a client still connected when stopped is let go */
	fd = connect_to(path);
	REQUIRE(fd >= 0);
	CHECK(expect(fd, "ready", 5));
	cfs_player_stop(p);
	CHECK_INT(read_n(fd, &c, 1), 0);
	close(fd);
	CHECK(stat(path, &st) < 0 && errno == ENOENT);
	rmdir(dir);

	CHECK_INT(cfs_socket_script_start(S("r 0 x\n"), "x", "/nonexistent-dir/sock", &q, msg,
					  sizeof(msg)), -ENOENT);
	CHECK_INT(cfs_socket_script_start(S("z\n"), "bad", "/tmp/unused", &q, msg, sizeof(msg)),
		  -EINVAL);
	CHECK(strstr(msg, "bad:1: unknown operation 'z'") == msg);
}

TEST(script_node)
{
	char node[32];

	CHECK_INT(cfs_script_node(S("# recorded\nd 0 /dev/hidraw5\nw 2 ^@\n"), node, sizeof(node)),
		  0);
	CHECK_STR(node, "/dev/hidraw5");
	CHECK_INT(cfs_script_node(S("r 0 x\nd 0 /dev/late\n"), node, sizeof(node)), -ENOENT);
	CHECK_INT(cfs_script_node(S("# only\n"), node, sizeof(node)), -ENOENT);
	CHECK_INT(cfs_script_node(S("d 0 /dev/a/very/long/name/indeed/too/long\n"), node,
				  sizeof(node)), -ENAMETOOLONG);
}

TEST(writer_round_trip)
{
	static const char want[] = "d 0 /dev/ttyUSB0\nw 5 ATI^M\nr 22 OK^M^J\nr 70 ^`more ^@\nw 5 x\n";
	struct cfs_script_writer *w = NULL;
	struct cfs_player *p = NULL;
	char *text = NULL, msg[512], node[32];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int sv[2];

	REQUIRE(f != NULL);
	REQUIRE(cfs_script_writer_new(f, "/dev/ttyUSB0", 1000, &w) == 0);
	/* 3 ms after the write before: the same block */
	CHECK_INT(cfs_script_writer_add(w, 'w', "AT", 2, 1005), 0);
	CHECK_INT(cfs_script_writer_add(w, 'w', "I\r", 2, 1008), 0);
	CHECK_INT(cfs_script_writer_add(w, 'w', "", 0, 1009), 0);
	/* a read right after a write starts a block all the same */
	CHECK_INT(cfs_script_writer_add(w, 'r', "OK\r", 3, 1030), 0);
	CHECK_INT(cfs_script_writer_add(w, 'r', "\n", 1, 1030), 0);
	/* 10 ms is no longer "right after" */
	CHECK_INT(cfs_script_writer_add(w, 'r', "^more \0", 7, 1100), 0);
	CHECK_INT(cfs_script_writer_add(w, 'w', "x", 1, 1105), 0);
	CHECK_INT(cfs_script_writer_add(w, 'x', "x", 1, 1105), -EINVAL);
	CHECK_INT(cfs_script_writer_finish(w), 0);
	fclose(f);
	REQUIRE(text != NULL);
	CHECK_STR(text, want);

	CHECK_INT(cfs_script_node(text, len, node, sizeof(node)), 0);
	CHECK_STR(node, "/dev/ttyUSB0");
	/* what was written plays back */
	REQUIRE(start_pair(text, len, "rec", sv, &p, msg, sizeof(msg)) == 0);
	CHECK_INT(write(sv[0], "ATI\r", 4), 4);
	CHECK(expect(sv[0], "OK\r\n^more \0", 11));
	CHECK_INT(write(sv[0], "x", 1), 1);
	CHECK_INT(cfs_player_wait(p, msg, sizeof(msg)), 0);
	cfs_player_stop(p);
	close_pair(sv);
	free(text);

	/* a full disk is the writer's error, not a short script said to be fine */
	f = fopen("/dev/full", "w");
	if (!f)
		return;
	setvbuf(f, NULL, _IONBF, 0);
	CHECK_INT(cfs_script_writer_new(f, NULL, 0, &w), 0);
	CHECK_INT(cfs_script_writer_add(w, 'r', "x", 1, 5), -ENOSPC);
	CHECK_INT(cfs_script_writer_finish(w), -ENOSPC);
	fclose(f);
}
