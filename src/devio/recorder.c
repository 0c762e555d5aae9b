// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * recorder.c - the supervisor of a recording (classfs-record): a program
 * runs on the host with the filter (cfs_seccomp_install_flags()), and
 * its calls on the recorded devices are made here, on a copy of its
 * descriptor, and recorded.
 *
 * The copy is the program's own open file (pidfd_getfd(), Linux 5.6):
 * the device sees one file, whose state (a claimed USB interface, a
 * terminal's settings, O_NONBLOCK) is the program's and ours alike, so
 * calls we let run in the kernel (CFS_IOCTL_PASS) and calls we make mix
 * as they would in the program.  Which device a descriptor is: the
 * st_rdev of /proc/TID/fd/N, a character device's, compared with the
 * recorded node's.
 *
 * Threads: one serves the listener and continues whatever is not ours
 * at once; each call on a recorded device is made by a thread of its own,
 * because it may block (a read waiting for the device, a blocking
 * REAPURB) while another thread of the program makes the call that ends
 * the wait.  A call that waits is polled, and given up when the program
 * stopped waiting for it (a signal, its death: the notification is no
 * longer valid) or the recording ends, so that no data the program will
 * never get is read from the device meanwhile.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/input.h>
#include <linux/usbdevice_fs.h>

#include "devio-internal.h"

/* what one read or write moves at most (more: a short read or write, as a device may) */
#define IO_MAX (1u << 20)
/* how often a waiting call looks whether the program still waits (ms) */
#define WAIT_POLL_MS 100

struct target {
	enum cfs_record_kind kind;
	char *dev;
	char *file;
	bool created;			/* @file did not exist before */
	bool append;			/* @file holds a recording of @dev, added to */
	bool newline;			/* ... a script whose last line has no newline */
	dev_t rdev;
	FILE *f;
	struct cfs_ioctl_recorder *ioctl;	/* CFS_RECORD_IOCTL */
	struct cfs_script_writer *script;	/* CFS_RECORD_SCRIPT, under cfs_recorder.lock */
	bool told_write, told_partial;	/* CFS_RECORD_EVEMU: logged once (cfs_recorder.lock) */
};

struct cfs_recorder {
	struct target *t;
	size_t n;
	int listener;
	int stopfd;			/* eventfd: the serving thread ends */
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;		/* the scripts, @workers, @stopping */
	pthread_cond_t idle;
	unsigned int workers;
	bool stopping;
};

/* one call on a recorded device, made by a thread of its own */
struct job {
	struct cfs_recorder *rec;
	struct target *t;
	struct seccomp_notif req;
	int fd;				/* our copy of the program's descriptor */
};

/**
 * cfs_recorder_new() - a recorder with nothing to record yet
 * @out: the recorder.
 *
 * Return: 0, -ENOMEM or another -errno.
 */
int cfs_recorder_new(struct cfs_recorder **out)
{
	struct cfs_recorder *rec = calloc(1, sizeof(*rec));

	if (!rec)
		return -ENOMEM;
	rec->listener = -1;
	rec->stopfd = eventfd(0, EFD_CLOEXEC);
	if (rec->stopfd < 0) {
		int r = -errno;

		free(rec);
		return r;
	}
	pthread_mutex_init(&rec->lock, NULL);
	pthread_cond_init(&rec->idle, NULL);
	*out = rec;
	return 0;
}

/*
 * Whether the script or evemu file @file (not empty) may be added to for
 * @dev, as umockdev-record checks: a script's first line that is no
 * comment, when a "d 0 NODE" line, names @dev; so does an evemu file's
 * "# device NODE" line before its first event ("E: ").  *@newline: its
 * last line lacks its newline.  Return: 0, or -EINVAL / -errno with @msg.
 */
static int recording_of(const char *file, enum cfs_record_kind kind, const char *dev,
			bool *newline, char *msg, size_t msgsize)
{
	const char *tag = kind == CFS_RECORD_EVEMU ? "# device " : "d 0 ";
	size_t taglen = strlen(tag);
	char *line = NULL;
	size_t cap = 0;
	unsigned int lineno = 0;
	bool header = true;
	ssize_t n;
	int r = 0;
	FILE *f = fopen(file, "re");

	if (!f) {
		r = -errno;
		snprintf(msg, msgsize, "cannot read %s: %s", file, strerror(-r));
		return r;
	}
	*newline = false;
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		*newline = line[n - 1] != '\n';
		if (!header)
			continue;
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		/* the header: a script's first line that is no comment, an evemu file's comments */
		if (kind == CFS_RECORD_EVEMU ? !strncmp(line, "E: ", 3) : line[0] != '#')
			header = false;
		if (!strncmp(line, tag, taglen) && strcmp(line + taglen, dev)) {
			snprintf(msg, msgsize, "%s:%u: a recording of %s, not of %s: record %s "
				 "into another file", file, lineno, line + taglen, dev, dev);
			r = -EINVAL;
			break;
		}
	}
	free(line);
	fclose(f);
	return r;
}

/**
 * cfs_recorder_add() - record @kind of calls on device @dev into @file
 * @rec: the recorder (not started yet).
 * @kind: ioctl() into an ioctl tree, or read()/write() into a script.
 * @dev: the device node ("/dev/ttyUSB0"): a character device.
 * @file: where the recording goes: opened now, emptied when the program
 *        starts, written as the calls come (a script) or at the end (a
 *        tree).  A @file that holds a recording of @dev already is added
 *        to, as umockdev-record does: a script goes on after its end, a
 *        tree gets the answers it lacks.
 * @msg: why it failed, naming @dev or @file.
 * @msgsize: @msg's size.
 *
 * Return: 0; -ENOENT (no @dev), -ENODEV (@dev is no character device),
 * -EINVAL (@file holds something else: another device's recording, a
 * line that does not parse), -errno of opening @file, -ENOMEM.
 */
int cfs_recorder_add(struct cfs_recorder *rec, enum cfs_record_kind kind, const char *dev,
		     const char *file, char *msg, size_t msgsize)
{
	struct target *t = NULL, *grown;
	struct stat st;
	int r, fd;

	if (stat(dev, &st) < 0) {
		r = -errno;
		snprintf(msg, msgsize, "cannot access device %s: %s", dev, strerror(-r));
		return r;
	}
	if (!S_ISCHR(st.st_mode)) {
		snprintf(msg, msgsize, "%s is no character device", dev);
		return -ENODEV;
	}
	grown = reallocarray(rec->t, rec->n + 1, sizeof(*rec->t));
	if (!grown)
		goto nomem;
	rec->t = grown;
	t = &rec->t[rec->n];
	*t = (struct target){ .kind = kind, .rdev = st.st_rdev };
	t->dev = strdup(dev);
	if (!t->dev)
		goto nomem;
	t->file = strdup(file);
	if (!t->file)
		goto nomem;
	/*
	 * Opened now, to refuse a file that cannot be written before the
	 * program runs; emptied only when it starts, and a file made here
	 * removed again when it never does.
	 */
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	t->created = fd >= 0;
	if (fd < 0 && errno == EEXIST)
		fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		t->f = fdopen(fd, "w");
		if (!t->f)
			close(fd);
	}
	if (!t->f) {
		r = -errno;
		snprintf(msg, msgsize, "cannot write %s: %s", file, strerror(-r));
		if (t->created)
			unlink(file);
		goto fail;
	}
	t->append = !t->created && fstat(fileno(t->f), &st) == 0 && st.st_size > 0;
	if (kind == CFS_RECORD_IOCTL) {
		struct cfs_ioctl_tree *before = NULL;

		r = t->append ? cfs_ioctl_file_tree(file, dev, &before, msg, msgsize) : 0;
		if (r == 0) {
			t->ioctl = cfs_ioctl_recorder_new(before);
			r = t->ioctl ? 0 : -ENOMEM;
			if (r)
				snprintf(msg, msgsize, "out of memory");
		}
	} else if (t->append) {
		r = recording_of(file, kind, dev, &t->newline, msg, msgsize);
	} else {
		r = 0;
	}
	if (r < 0) {
		fclose(t->f);
		if (t->created)
			unlink(file);
		goto fail;
	}
	rec->n++;
	return 0;
nomem:
	snprintf(msg, msgsize, "out of memory");
	r = -ENOMEM;
fail:
	if (t) {
		free(t->dev);
		free(t->file);
	}
	return r;
}

/**
 * cfs_recorder_wants_io() - whether @rec records reads and writes (a
 *                           script): the filter must send them
 * @rec: the recorder.
 * Return: true when a script is recorded.
 */
bool cfs_recorder_wants_io(const struct cfs_recorder *rec)
{
	for (size_t i = 0; i < rec->n; i++)
		if (rec->t[i].kind != CFS_RECORD_IOCTL)
			return true;
	return false;
}

/*
 * the recorded device that the program's descriptor @fd is, for an ioctl
 * (@io false) or a read or write (a script's or an evemu file's), or NULL
 */
static struct target *target_of(struct cfs_recorder *rec, pid_t tid, int fd, bool io)
{
	struct stat st;
	char p[64];

	snprintf(p, sizeof(p), "/proc/%d/fd/%d", tid, fd);
	if (stat(p, &st) < 0 || !S_ISCHR(st.st_mode))
		return NULL;
	for (size_t i = 0; i < rec->n; i++)
		if ((rec->t[i].kind != CFS_RECORD_IOCTL) == io && rec->t[i].rdev == st.st_rdev)
			return &rec->t[i];
	return NULL;
}

/* the process @tid is a thread of: pidfd_open() wants a thread-group leader */
static pid_t tgid_of(pid_t tid)
{
	char p[64], line[128];
	pid_t tgid = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/status", tid);
	f = fopen(p, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* a copy of descriptor @fd of thread @tid's process: the same open file; -errno */
static int copy_fd(pid_t tid, int fd)
{
	pid_t tgid = tgid_of(tid);
	int pidfd, r;

	if (tgid <= 0)
		return -ESRCH;
	pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (pidfd < 0)
		return -errno;
	r = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (r < 0)
		r = -errno;
	close(pidfd);
	return r;
}

/*
 * wait until our copy is ready for @events, as the program's blocking
 * call would: 0, or -EINTR when the program no longer waits (a signal,
 * its death) or the recording ends
 */
static int wait_ready(struct job *j, short events)
{
	for (;;) {
		struct pollfd p = { .fd = j->fd, .events = events };
		bool stopping;
		int k = poll(&p, 1, WAIT_POLL_MS);

		if (k > 0)
			return 0;
		if (k < 0 && errno != EINTR)
			return -errno;
		pthread_mutex_lock(&j->rec->lock);
		stopping = j->rec->stopping;
		pthread_mutex_unlock(&j->rec->lock);
		if (stopping || !cfs_seccomp_valid(j->rec->listener, j->req.id))
			return -EINTR;
	}
}

/* the execute callback: the request on our copy */
static long exec_ioctl(void *ctx, unsigned long request, unsigned long arg)
{
	struct job *j = ctx;
	long r;

	if (request != USBDEVFS_REAPURB) {
		r = ioctl(j->fd, request, arg);
		return r < 0 ? -errno : r;
	}
	/* a blocking reap, made as a wait and a reap that does not block */
	for (;;) {
		r = wait_ready(j, POLLOUT);
		if (r < 0)
			return r;
		r = ioctl(j->fd, USBDEVFS_REAPURBNDELAY, arg);
		if (r >= 0 || errno != EAGAIN)
			return r < 0 ? -errno : r;
	}
}

/* the iovecs of readv()/writev() and their total length (capped at IO_MAX) */
static int read_iov(const struct cfs_mem *m, uint64_t addr, uint64_t cnt, struct iovec **out,
		    size_t *total)
{
	struct iovec *iov;
	int err;

	if (cnt > IOV_MAX)
		return -EINVAL;
	iov = calloc(cnt ? cnt : 1, sizeof(*iov));
	if (!iov)
		return -ENOMEM;
	err = cfs_mem_read(m, addr, iov, cnt * sizeof(*iov));
	if (err) {
		free(iov);
		return err;
	}
	*total = 0;
	for (size_t i = 0; i < cnt; i++) {
		if (iov[i].iov_len > IO_MAX - *total)
			iov[i].iov_len = IO_MAX - *total;
		*total += iov[i].iov_len;
	}
	*out = iov;
	return 0;
}

/* copy @len bytes between @buf and the program's iovecs (to them: @to_prog) */
static int scatter(const struct cfs_mem *m, const struct iovec *iov, size_t cnt, uint8_t *buf,
		   size_t len, bool to_prog)
{
	size_t off = 0;
	int err = 0;

	for (size_t i = 0; i < cnt && off < len && !err; i++) {
		size_t n = iov[i].iov_len < len - off ? iov[i].iov_len : len - off;
		uint64_t a = (uintptr_t)iov[i].iov_base;

		err = to_prog ? cfs_mem_write(m, a, buf + off, n) : cfs_mem_read(m, a, buf + off, n);
		off += n;
	}
	return err;
}

/*
 * the events read from an evemu file's device, as umockdev-record writes
 * them: "E: SEC.USEC TYPE CODE VALUE" (a read ends on an event's end:
 * evdev's; bytes of a partial one are left out, and said once)
 */
static void evemu_add(struct target *t, const uint8_t *buf, size_t len)
{
	struct input_event e;
	size_t off;

	for (off = 0; off + sizeof(e) <= len; off += sizeof(e)) {
		memcpy(&e, buf + off, sizeof(e));
		fprintf(t->f, "E: %ld.%06ld %04X %04X %d\n", (long)e.input_event_sec,
			(long)e.input_event_usec, e.type, e.code, e.value);
	}
	fflush(t->f);
	if (off != len && !t->told_partial) {
		t->told_partial = true;
		cfs_devio_log("%s: a read of %zu bytes, not whole input events (%zu bytes each): "
			      "the rest is not recorded", t->dev, len, sizeof(e));
	}
}

/* read(), write() and their kin on our copy, recorded: the program's result */
static long do_io(struct job *j)
{
	const struct seccomp_data *d = &j->req.data;
	bool in = d->nr == __NR_read || d->nr == __NR_readv || d->nr == __NR_pread64;
	bool vec = d->nr == __NR_readv || d->nr == __NR_writev;
	pid_t tid = (pid_t)j->req.pid;
	struct iovec *iov = NULL, one;
	size_t len = 0, cnt = 1;
	struct cfs_mem mem;
	uint8_t *buf;
	long r;
	int flags;

	cfs_mem_process(&mem, &tid);
	if (vec) {
		cnt = (size_t)d->args[2];
		r = read_iov(&mem, d->args[1], d->args[2], &iov, &len);
		if (r < 0)
			return r;
	} else {
		len = d->args[2] < IO_MAX ? (size_t)d->args[2] : IO_MAX;
		one = (struct iovec){ .iov_base = (void *)(uintptr_t)d->args[1], .iov_len = len };
		iov = &one;
	}
	buf = malloc(len ? len : 1);
	r = -ENOMEM;
	if (!buf)
		goto out;
	if (!in) {
		r = scatter(&mem, iov, cnt, buf, len, false);
		if (r < 0)
			goto out;
	}
	/* a blocking file waits here for the device, as long as the program does */
	flags = fcntl(j->fd, F_GETFL);
	if (len && flags >= 0 && !(flags & O_NONBLOCK)) {
		r = wait_ready(j, in ? POLLIN : POLLOUT);
		if (r < 0)
			goto out;
	}
	if (d->nr == __NR_pread64)
		r = pread(j->fd, buf, len, (off_t)d->args[3]);
	else if (d->nr == __NR_pwrite64)
		r = pwrite(j->fd, buf, len, (off_t)d->args[3]);
	else
		r = in ? read(j->fd, buf, len) : write(j->fd, buf, len);
	if (r < 0) {
		r = -errno;
		goto out;
	}
	if (r > 0) {
		pthread_mutex_lock(&j->rec->lock);
		if (j->t->kind == CFS_RECORD_EVEMU)
			evemu_add(j->t, buf, (size_t)r);
		else
			cfs_script_writer_add(j->t->script, in ? 'r' : 'w', buf, (size_t)r,
					      cfs_script_now_ms());
		pthread_mutex_unlock(&j->rec->lock);
	}
	/* read from the device: the program's now, or lost with an EFAULT as the kernel's */
	if (in && r > 0) {
		int err = scatter(&mem, iov, cnt, buf, (size_t)r, true);

		if (err)
			r = err;
	}
out:
	free(buf);
	if (iov != &one)
		free(iov);
	return r;
}

static void *work(void *arg)
{
	struct job *j = arg;
	struct cfs_recorder *rec = j->rec;
	pid_t tid = (pid_t)j->req.pid;
	long r;

	j->fd = copy_fd(tid, (int)j->req.data.args[0]);
	if (j->fd < 0) {
		/* gone, or not ours to copy: the program's own call then */
		cfs_seccomp_continue(rec->listener, j->req.id);
		goto out;
	}
	/* /proc and the descriptor were the caller's only while it waits */
	if (!cfs_seccomp_valid(rec->listener, j->req.id))
		goto out;
	if (j->req.data.nr == __NR_ioctl) {
		struct cfs_mem mem;
		struct cfs_ioctl_call call;

		cfs_mem_process(&mem, &tid);
		call = (struct cfs_ioctl_call){ .request = (unsigned int)j->req.data.args[1],
						.arg = j->req.data.args[2], .mem = &mem,
						.node = j->t->dev, .pid = tid };
		r = cfs_ioctl_record(j->t->ioctl, &call, exec_ioctl, j);
		if (r == CFS_IOCTL_PASS)
			cfs_seccomp_continue(rec->listener, j->req.id);
		else
			cfs_seccomp_answer(rec->listener, j->req.id, r);
	} else {
		r = do_io(j);
		cfs_seccomp_answer(rec->listener, j->req.id, r);
	}
out:
	if (j->fd >= 0)
		close(j->fd);
	free(j);
	pthread_mutex_lock(&rec->lock);
	if (!--rec->workers)
		pthread_cond_broadcast(&rec->idle);
	pthread_mutex_unlock(&rec->lock);
	return NULL;
}

/* a call the filter sent: ours to make in a thread of its own, or continued */
static void dispatch(struct cfs_recorder *rec, const struct seccomp_notif *req)
{
	bool io = true, in = false;
	pthread_attr_t attr;
	struct target *t;
	struct job *j;
	pthread_t th;

	switch (req->data.nr) {
	case __NR_ioctl:
		io = false;
		break;
	case __NR_read:
	case __NR_readv:
	case __NR_pread64:
		in = true;
		break;
	case __NR_write:
	case __NR_writev:
	case __NR_pwrite64:
		break;
	default:
		goto pass;
	}
	t = target_of(rec, (pid_t)req->pid, (int)req->data.args[0], io);
	if (!t)
		goto pass;
	/* an evemu file holds what is read: a write (an LED, a force feedback) runs unrecorded */
	if (t->kind == CFS_RECORD_EVEMU && io && !in) {
		pthread_mutex_lock(&rec->lock);
		if (!t->told_write)
			cfs_devio_log("%s: a write to an input device is not recorded in an evemu "
				      "file", t->dev);
		t->told_write = true;
		pthread_mutex_unlock(&rec->lock);
		goto pass;
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		goto fail;
	*j = (struct job){ .rec = rec, .t = t, .req = *req, .fd = -1 };
	pthread_mutex_lock(&rec->lock);
	rec->workers++;
	pthread_mutex_unlock(&rec->lock);
	if (cfs_thread_create(&th, true, work, j) == 0)
		return;
	pthread_attr_destroy(&attr);
	/* no thread: made here, at the cost of the others' waiting */
	work(j);
	return;
fail:
	cfs_seccomp_answer(rec->listener, req->id, -ENOMEM);
	return;
pass:
	cfs_seccomp_continue(rec->listener, req->id);
}

static void *serve(void *arg)
{
	struct cfs_recorder *rec = arg;
	sigset_t all;

	/* signals are the caller's business (it passes them on to the program) */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		struct pollfd p[2] = { { .fd = rec->listener, .events = POLLIN },
				       { .fd = rec->stopfd, .events = POLLIN } };
		struct seccomp_notif req;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			break;
		if (p[0].revents & POLLIN) {
			if (cfs_seccomp_receive(rec->listener, &req) == 0)
				dispatch(rec, &req);
		} else if (p[0].revents & (POLLHUP | POLLERR)) {
			/* the program and all it started are gone */
			break;
		}
	}
	return NULL;
}

/* to the end of the script @f, on a line of its own (@newline: one is owed) */
static int script_append(FILE *f, bool newline)
{
	if (fseeko(f, 0, SEEK_END) < 0)
		return -errno;
	if (newline && fputc('\n', f) == EOF)
		return -EIO;
	return fflush(f) ? -errno : 0;
}

/**
 * cfs_recorder_start() - serve @listener's calls from now on
 * @rec: the recorder, its devices added.
 * @listener: what the program's cfs_seccomp_install_flags() returned
 *            (taken: closed by cfs_recorder_finish(), or here on error).
 *
 * Return: 0 or -errno.
 */
int cfs_recorder_start(struct cfs_recorder *rec, int listener)
{
	int r;

	if (rec->started || listener < 0) {
		if (listener >= 0)
			close(listener);
		return -EINVAL;
	}
	for (size_t i = 0; i < rec->n; i++) {
		struct target *t = &rec->t[i];

		if (t->append)	/* a tree is written whole at the end, a script goes on */
			r = t->kind != CFS_RECORD_IOCTL ? script_append(t->f, t->newline) : 0;
		else
			r = ftruncate(fileno(t->f), 0) < 0 ? -errno : 0;
		if (!r && t->kind == CFS_RECORD_SCRIPT)
			r = cfs_script_writer_new(t->f, t->append ? NULL : t->dev,
						  cfs_script_now_ms(), &t->script);
		if (!r && t->kind == CFS_RECORD_EVEMU && !t->append &&
		    (fprintf(t->f, "# EVEMU 1.2\n# device %s\n", t->dev) < 0 || fflush(t->f)))
			r = -EIO;
		if (r < 0) {
			close(listener);
			return r;
		}
	}
	rec->listener = listener;
	r = cfs_thread_create(&rec->thread, false, serve, rec);
	if (r < 0) {
		close(listener);
		rec->listener = -1;
		return r;
	}
	rec->started = true;
	return 0;
}

/**
 * cfs_recorder_finish() - stop serving, write the recordings, free @rec
 * @rec: the recorder (NULL: nothing).
 * @msg: the first failure, naming the file.
 * @msgsize: @msg's size.
 *
 * Calls the program still makes afterwards (a process it left behind)
 * fail with ENOSYS, the listener being gone.  A recorder never started
 * writes nothing, and removes the files it made.
 *
 * Return: 0, or the first -errno of writing a recording.
 */
int cfs_recorder_finish(struct cfs_recorder *rec, char *msg, size_t msgsize)
{
	uint64_t one = 1;
	int r = 0;

	if (!rec)
		return 0;
	if (rec->started) {
		(void)!write(rec->stopfd, &one, sizeof(one));
		pthread_join(rec->thread, NULL);
	}
	/* the calls in flight end: answered, or given up (wait_ready()) */
	pthread_mutex_lock(&rec->lock);
	rec->stopping = true;
	while (rec->workers)
		pthread_cond_wait(&rec->idle, &rec->lock);
	pthread_mutex_unlock(&rec->lock);
	for (size_t i = 0; i < rec->n; i++) {
		struct target *t = &rec->t[i];
		int e;

		if (!rec->started) {
			/* nothing ran: nothing recorded, the file as it was */
			e = 0;
			if (t->script)
				cfs_script_writer_finish(t->script);
			fclose(t->f);
			if (t->created)
				unlink(t->file);
		} else {
			if (t->kind == CFS_RECORD_IOCTL && t->append &&
			    (fseeko(t->f, 0, SEEK_SET) < 0 || ftruncate(fileno(t->f), 0) < 0))
				e = -errno;
			else if (t->kind == CFS_RECORD_IOCTL)
				e = cfs_ioctl_recorder_write(t->ioctl, t->dev, t->f);
			else if (t->kind == CFS_RECORD_SCRIPT)
				e = cfs_script_writer_finish(t->script);
			else
				e = ferror(t->f) ? -EIO : 0;
			if (fclose(t->f) && !e)
				e = -errno;
		}
		if (e < 0 && !r) {
			r = e;
			snprintf(msg, msgsize, "the recording of %s: %s", t->dev, strerror(-e));
		}
		cfs_ioctl_recorder_free(t->ioctl);
		free(t->dev);
		free(t->file);
	}
	if (rec->listener >= 0)
		close(rec->listener);
	close(rec->stopfd);
	pthread_cond_destroy(&rec->idle);
	pthread_mutex_destroy(&rec->lock);
	free(rec->t);
	free(rec);
	return r;
}
