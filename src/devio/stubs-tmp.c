#include <errno.h>
#include "classfs-internal/devio.h"
int cfs_script_start(const char *text, size_t len, const char *name, int fd, struct cfs_player **out, char *msg, size_t msgsize) { return -ENOSYS; }
int cfs_evemu_start(const char *text, size_t len, const char *name, int fd, struct cfs_player **out, char *msg, size_t msgsize) { return -ENOSYS; }
int cfs_socket_script_start(const char *text, size_t len, const char *name, const char *path, struct cfs_player **out, char *msg, size_t msgsize) { return -ENOSYS; }
int cfs_player_wait(struct cfs_player *p, char *msg, size_t msgsize) { return -ENOSYS; }
void cfs_player_stop(struct cfs_player *p) {}
