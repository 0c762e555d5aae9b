// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * record-pty - a modem on a pty, for classfs-record's tests:
 *
 *   record-pty ANSWER -- COMMAND [ARG]...
 *
 * Opens a pty (raw: no echo, no line discipline), runs COMMAND with
 * "@PTY@" in its arguments replaced by the slave's path, reads from the
 * master what COMMAND writes up to a carriage return, then writes ANSWER
 * there.  Prints "pty: PATH" and "got: BYTES" (escaped as a script's
 * data); exits with COMMAND's status (128 + N for signal N), 99 when
 * COMMAND wrote no line within 10 s.  An ANSWER "hex:HEX" is the bytes
 * of HEX (an input device's events, say), written as COMMAND starts,
 * without waiting for a line.
 */
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/* what COMMAND wrote, up to and with its '\r': the line's length, or -1 */
static int read_line(int master, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size - 1) {
		struct pollfd p = { .fd = master, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 10000) <= 0)
			return -1;
		n = read(master, buf + got, size - 1 - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
		buf[got] = '\0';
		if (memchr(buf, '\r', got))
			return (int)got;
	}
	return -1;
}

int main(int argc, char **argv)
{
	char name[256], line[256], shown[1024];
	unsigned char bytes[1024];
	size_t k = 0, nbytes = 0;
	struct termios tio;
	int master, slave, st, n;
	bool now;
	pid_t p;

	if (argc < 4 || strcmp(argv[2], "--")) {
		fprintf(stderr, "usage: record-pty ANSWER -- COMMAND [ARG]...\n");
		return 2;
	}
	now = !strncmp(argv[1], "hex:", 4);
	for (const char *h = argv[1] + 4; now && h[0] && h[1] && nbytes < sizeof(bytes); h += 2)
		if (sscanf(h, "%2hhx", &bytes[nbytes++]) != 1)
			return 2;
	if (openpty(&master, &slave, name, NULL, NULL) < 0) {
		perror("openpty");
		return 2;
	}
	tcgetattr(slave, &tio);
	cfmakeraw(&tio);
	tcsetattr(slave, TCSANOW, &tio);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("pty: %s\n", name);
	for (int i = 3; i < argc; i++) {
		char *at = strstr(argv[i], "@PTY@"), *s;

		if (!at)
			continue;
		if (asprintf(&s, "%.*s%s%s", (int)(at - argv[i]), argv[i], name, at + 5) < 0)
			return 2;
		argv[i] = s;	/* the process's to the end */
	}
	p = fork();
	if (p < 0) {
		perror("fork");
		return 2;
	}
	if (p == 0) {
		close(master);
		close(slave);
		execvp(argv[3], argv + 3);
		perror(argv[3]);
		_exit(127);
	}
	/* the slave stays open here: the master never reads EIO between opens */
	if (now) {
		if (write(master, bytes, nbytes) != (ssize_t)nbytes)
			perror("write");
		goto wait;
	}
	n = read_line(master, line, sizeof(line));
	if (n < 0) {
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
		printf("got: nothing\n");
		return 99;
	}
	for (int i = 0; i < n && k + 3 < sizeof(shown); i++) {
		unsigned char c = (unsigned char)line[i];

		if (c < 32) {
			shown[k++] = '^';
			shown[k++] = (char)(c + 64);
		} else {
			shown[k++] = (char)c;
		}
	}
	shown[k] = '\0';
	printf("got: %s\n", shown);
	if (write(master, argv[1], strlen(argv[1])) < 0)
		perror("write");
wait:
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return 2;
	close(master);
	close(slave);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
