/*
 * xdp.c - host side of the XDP steering program: pre-flight check of the
 * interface, discovery of the attached program's maps by name, range/port
 * configuration, counters and crash cleanup (see xdp.h). Uses libbpf only;
 * the program itself is loaded by DPDK's net_af_xdp.
 */
#include "ctl/xdp.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>

#include "base/compiler.h"
#include "base/log.h"
#include "ctl/flow_plan.h"
#include "ctl/steer_abi.h"

/* One xsks_map slot per worker the plan may have; one mode numbering. */
_Static_assert(LUNAR_STEER_MAX_QUEUES == FLOW_PLAN_MAX_QUEUES,
	       "xsks_map must have a slot for every queue a plan may use");
_Static_assert(LUNAR_STEER_LISTEN_LOW_BITS == FLOW_LISTEN_LOW_BITS &&
		   LUNAR_STEER_LISTEN_RSS == FLOW_LISTEN_RSS,
	       "steer_abi.h and flow_plan.h number the listen modes alike");

/* Resolve @ifname or explain how to get one. */
static int ifindex_of(const char *ifname, char *err, size_t errlen)
{
	unsigned int idx;

	if (!ifname || !*ifname || strlen(ifname) >= IF_NAMESIZE) {
		lunar_set_err(err, errlen, "invalid interface name '%s'",
			      ifname ? ifname : "(null)");
		return -EINVAL;
	}
	idx = if_nametoindex(ifname);
	if (!idx) {
		lunar_set_err(err, errlen, "interface %s not found; create it or check `ip link`",
			      ifname);
		return -ENODEV;
	}
	return (int)idx;
}

/* Name of program @id, or "?" if it vanished meanwhile. */
static void prog_name(uint32_t id, char *name, size_t len)
{
	struct bpf_prog_info info;
	uint32_t ilen = sizeof(info);
	int fd;

	snprintf(name, len, "?");
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(fd, &info, &ilen) && info.name[0])
		snprintf(name, len, "%s", info.name);
	close(fd);
}

/*
 * The id of whatever XDP program is attached, in any mode. A driver-mode
 * program is what net_af_xdp attaches on veth; generic (skb) mode is what a
 * forced-copy or older setup leaves; hw for completeness.
 */
static int attached_prog(int ifindex, uint32_t *id, const char **mode)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int ret;

	ret = bpf_xdp_query(ifindex, 0, &q);
	if (ret < 0)
		return ret;
	*id = 0;
	*mode = "";
	if (q.drv_prog_id) {
		*id = q.drv_prog_id;
		*mode = "driver";
	} else if (q.skb_prog_id) {
		*id = q.skb_prog_id;
		*mode = "generic";
	} else if (q.hw_prog_id) {
		*id = q.hw_prog_id;
		*mode = "offload";
	} else if (q.prog_id) {
		*id = q.prog_id;
		*mode = "unknown";
	}
	return 0;
}

#define LUNAR_RUN_DIR "/run/lunar"

/* /run/lunar/xdp-<netns inode>-<ifname>.lock: names repeat across namespaces. */
static int owner_lock_path(const char *ifname, char *path, size_t len)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st) < 0)
		return -errno;
	if (mkdir(LUNAR_RUN_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, len, LUNAR_RUN_DIR "/xdp-%lu-%s.lock", (unsigned long)st.st_ino, ifname);
	return 0;
}

/* Is @fd the file now at @path? */
static bool same_file(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * Take @ifname's owner lock: the descriptor, or a negative errno. On
 * -EBUSY @pid holds the holder's PID as it wrote it ("unknown" if
 * unreadable); @path is the lock file either way (empty if none).
 */
static int owner_lock(const char *ifname, char *pid, size_t pidlen, char *path, size_t pathlen)
{
	int fd, ret = owner_lock_path(ifname, path, pathlen);

	snprintf(pid, pidlen, "unknown");
	if (ret < 0) {
		*path = 0;
		return ret;
	}
	for (unsigned tries = 0;; tries++) {
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			ssize_t n;

			ret = errno == EWOULDBLOCK ? -EBUSY : -errno;
			n = pread(fd, pid, pidlen - 1, 0);
			if (n > 0) {
				pid[n] = 0;
				pid[strcspn(pid, "\n")] = 0;
			}
			close(fd);
			return ret;
		}
		/*
		 * A holder that let go unlinks the file before closing it
		 * (xdp_owner_unlock()): a lock on a file no longer at @path
		 * guards nothing, so open the path again.
		 */
		if (same_file(fd, path))
			break;
		close(fd);
		if (tries == 8)
			return -EAGAIN;
	}
	snprintf(pid, pidlen, "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, strlen(pid), 0) < 0)
		LOG_WARN("lock file %s: cannot record our pid: %s", path, strerror(errno));
	return fd;
}

int xdp_owner_lock(const char *ifname, char *err, size_t errlen)
{
	char path[128], pid[16];
	int ret = owner_lock(ifname, pid, sizeof(pid), path, sizeof(path));

	if (ret == -EBUSY)
		lunar_set_err(err, errlen,
			      "interface %s is driven by another lunar process (pid %s, lock %s); "
			      "stop it or give this one another interface",
			      ifname, pid, path);
	else if (ret < 0)
		lunar_set_err(err, errlen, "cannot take the lock %s of interface %s: %s",
			      *path ? path : LUNAR_RUN_DIR, ifname, strerror(-ret));
	return ret;
}

void xdp_owner_unlock(const char *ifname, int fd)
{
	char path[128];

	if (fd < 0)
		return;
	/* Unlink while still holding it, so that no lock file outlives its interface's user. */
	if (owner_lock_path(ifname, path, sizeof(path)) == 0 && same_file(fd, path))
		unlink(path);
	close(fd); /* the lock goes with it */
}

int xdp_check_free(const char *ifname, char *err, size_t errlen)
{
	const char *mode;
	char name[BPF_OBJ_NAME_LEN];
	uint32_t id;
	int ifindex, ret;

	ifindex = ifindex_of(ifname, err, errlen);
	if (ifindex < 0)
		return ifindex;
	ret = attached_prog(ifindex, &id, &mode);
	if (ret < 0) {
		lunar_set_err(err, errlen, "cannot query XDP state of %s: %s", ifname,
			      strerror(-ret));
		return ret;
	}
	if (!id)
		return 0;
	prog_name(id, name, sizeof(name));
	if (!strcmp(name, "lunar_steer")) {
		char path[128], pid[16];
		int lock = owner_lock(ifname, pid, sizeof(pid), path, sizeof(path));

		if (lock == -EBUSY) {
			lunar_set_err(
			    err, errlen,
			    "interface %s is driven by another lunar process (pid %s, lock "
			    "%s) through its XDP program lunar_steer (id %u, %s mode); stop "
			    "that process or give this one another interface",
			    ifname, pid, path, id, mode);
			return lock;
		}
		if (lock < 0) {
			lunar_set_err(
			    err, errlen,
			    "interface %s has XDP program lunar_steer (id %u, %s mode) and its "
			    "owner lock cannot be checked (%s: %s); if no lunar process uses "
			    "it, remove it with `ip link set dev %s xdp off`",
			    ifname, id, mode, *path ? path : LUNAR_RUN_DIR, strerror(-lock),
			    ifname);
			return lock;
		}
		/* Its process is gone (a crash, SIGKILL): nobody will detach it. */
		LOG_WARN(
		    "interface %s: removing XDP program lunar_steer (id %u, %s mode) left by a "
		    "lunar process that died",
		    ifname, id, mode);
		ret = xdp_detach(ifname);
		xdp_owner_unlock(ifname, lock);
		if (ret < 0)
			lunar_set_err(
			    err, errlen,
			    "cannot remove the stale XDP program on %s: %s; remove it with "
			    "`ip link set dev %s xdp off`",
			    ifname, strerror(-ret), ifname);
		return ret;
	}
	lunar_set_err(err, errlen,
		      "interface %s already has XDP program %s (id %u, %s mode); "
		      "remove it with `ip link set dev %s xdp off` (or "
		      "xdp-loader unload %s --all) if it is stale, or stop the "
		      "program that owns it",
		      ifname, name, id, mode, ifname, ifname);
	return -EBUSY;
}

struct want_map {
	const char *name;
	uint32_t type;
	uint32_t value_size;
	uint32_t min_entries;
	int *fd;
};

/* Keep @fd if map @info is one of @want (and has the agreed layout). */
static int match_map(int fd, const struct bpf_map_info *info, struct want_map *want, size_t n,
		     char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(info->name, want[i].name))
			continue;
		if (*want[i].fd >= 0)
			break; /* duplicate name: keep the first */
		if (info->type != want[i].type || info->value_size != want[i].value_size ||
		    info->max_entries < want[i].min_entries) {
			lunar_set_err(err, errlen,
				      "map %s of the attached XDP program has another "
				      "layout (type %u, value %u B, %u entries) than "
				      "this lunar expects; rebuild and reload "
				      "lunar_steer.bpf.o from the same version",
				      info->name, info->type, info->value_size, info->max_entries);
			return -EPROTO;
		}
		*want[i].fd = fd;
		return 1;
	}
	return 0;
}

/*
 * Learn the config in force: what an earlier handle wrote, or the
 * program's defaults (valid == 0: LUNA range, single queue).
 */
static int read_cfg(struct xdp_steer *st)
{
	struct lunar_steer_cfg cfg;
	uint32_t key = 0;

	if (bpf_map_lookup_elem(st->cfg_fd, &key, &cfg))
		return -errno;
	if (!cfg.valid)
		cfg = (struct lunar_steer_cfg){.lo = LUNAR_STEER_DEFAULT_LO,
					       .hi = LUNAR_STEER_DEFAULT_HI};
	st->lo = cfg.lo;
	st->hi = cfg.hi;
	st->n_queues = cfg.n_queues;
	st->listen = cfg.listen;
	st->ip = cfg.ip;
	return 0;
}

int xdp_steer_open(const char *ifname, struct xdp_steer *out, char *err, size_t errlen)
{
	struct xdp_steer st = {.cfg_fd = -1, .ports_fd = -1, .stats_fd = -1, .cookie_fd = -1};
	struct want_map want[] = {
	    {LUNAR_STEER_CFG_MAP, BPF_MAP_TYPE_ARRAY, sizeof(struct lunar_steer_cfg), 1,
	     &st.cfg_fd},
	    {LUNAR_STEER_PORTS_MAP, BPF_MAP_TYPE_ARRAY, sizeof(__u32), LUNAR_STEER_NPORTS,
	     &st.ports_fd},
	    {LUNAR_STEER_STATS_MAP, BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u64),
	     LUNAR_STEER_STAT_ROWS * LUNAR_STEER_NSTATS, &st.stats_fd},
	    {LUNAR_STEER_COOKIE_MAP, BPF_MAP_TYPE_ARRAY, sizeof(struct lunar_cookie_cfg),
	     LUNAR_STEER_MAX_QUEUES, &st.cookie_fd},
	};
	struct bpf_prog_info info;
	uint32_t ilen, nmaps, *ids = NULL;
	char name[BPF_OBJ_NAME_LEN];
	const char *mode;
	int ifindex, prog_fd = -1, ret;

	ifindex = ifindex_of(ifname, err, errlen);
	if (ifindex < 0)
		return ifindex;
	st.ifindex = ifindex;
	ret = attached_prog(ifindex, &st.prog_id, &mode);
	if (ret < 0) {
		lunar_set_err(err, errlen, "cannot query XDP state of %s: %s", ifname,
			      strerror(-ret));
		return ret;
	}
	if (!st.prog_id) {
		lunar_set_err(err, errlen,
			      "interface %s has no XDP program; the af_xdp port must "
			      "load lunar_steer.bpf.o first (net_af_xdp xdp_prog=...)",
			      ifname);
		return -ENOENT;
	}
	prog_fd = bpf_prog_get_fd_by_id(st.prog_id);
	if (prog_fd < 0) {
		ret = -errno;
		lunar_set_err(err, errlen, "cannot open XDP program id %u on %s: %s", st.prog_id,
			      ifname, strerror(errno));
		return ret;
	}

	/* First call learns the number of maps, second fetches their ids. */
	memset(&info, 0, sizeof(info));
	ilen = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &ilen)) {
		ret = -errno;
		lunar_set_err(err, errlen, "cannot read XDP program id %u: %s", st.prog_id,
			      strerror(errno));
		goto out;
	}
	snprintf(name, sizeof(name), "%s", info.name);
	nmaps = info.nr_map_ids;
	ids = calloc(nmaps ? nmaps : 1, sizeof(*ids));
	if (!ids) {
		ret = -ENOMEM;
		lunar_set_err(err, errlen, "out of memory");
		goto out;
	}
	memset(&info, 0, sizeof(info));
	info.nr_map_ids = nmaps;
	info.map_ids = (uint64_t)(uintptr_t)ids;
	ilen = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &ilen)) {
		ret = -errno;
		lunar_set_err(err, errlen, "cannot read maps of XDP program id %u: %s", st.prog_id,
			      strerror(errno));
		goto out;
	}
	if (info.nr_map_ids < nmaps)
		nmaps = info.nr_map_ids;

	for (uint32_t i = 0; i < nmaps; i++) {
		struct bpf_map_info mi;
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue; /* map freed meanwhile: reported as missing below */
		memset(&mi, 0, sizeof(mi));
		ret = bpf_obj_get_info_by_fd(fd, &mi, &mlen)
			  ? -errno
			  : match_map(fd, &mi, want, ARRAY_SIZE(want), err, errlen);
		if (ret <= 0)
			close(fd);
		if (ret < 0)
			goto out;
	}
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		if (*want[i].fd >= 0)
			continue;
		lunar_set_err(err, errlen,
			      "XDP program %s (id %u) on %s is not lunar's steering "
			      "program (no map %s); remove it with `ip link set dev %s "
			      "xdp off` and let the af_xdp port load lunar_steer.bpf.o",
			      name, st.prog_id, ifname, want[i].name, ifname);
		ret = -ENOENT;
		goto out;
	}
	ret = read_cfg(&st);
	if (ret < 0) {
		lunar_set_err(err, errlen, "cannot read map %s of XDP program id %u: %s",
			      LUNAR_STEER_CFG_MAP, st.prog_id, strerror(-ret));
		goto out;
	}
	*out = st;
	ret = 0;
out:
	if (ret < 0)
		xdp_steer_close(&st);
	free(ids);
	close(prog_fd);
	return ret;
}

/*
 * Write the whole config in one map update. An array map's update is a
 * copy a program on another CPU may read half-done: the few segments
 * that meet it while lunar starts may be steered by a mix of the two.
 */
static int write_cfg(struct xdp_steer *st, uint16_t lo, uint16_t hi, uint16_t n_queues,
		     uint16_t listen, uint32_t ip)
{
	struct lunar_steer_cfg cfg = {
	    .valid = 1, .lo = lo, .hi = hi, .n_queues = n_queues, .listen = listen, .ip = ip};
	uint32_t key = 0;

	if (bpf_map_update_elem(st->cfg_fd, &key, &cfg, BPF_ANY))
		return -errno;
	st->lo = lo;
	st->hi = hi;
	st->n_queues = n_queues;
	st->listen = listen;
	st->ip = ip;
	return 0;
}

int xdp_steer_set_addr(struct xdp_steer *st, uint32_t ip)
{
	if (!st || st->cfg_fd < 0)
		return -EINVAL;
	return write_cfg(st, st->lo, st->hi, st->n_queues, st->listen, ip);
}

int xdp_steer_set_range(struct xdp_steer *st, uint16_t lo, uint16_t hi)
{
	struct flow_plan check;

	if (!st || st->cfg_fd < 0)
		return -EINVAL;
	/* Several workers: each must still own a sub-range of the new range. */
	if (st->n_queues > 1 && flow_plan_init(&check, st->n_queues, lo, hi, NULL, 0) < 0)
		return -EINVAL;
	return write_cfg(st, lo, hi, st->n_queues, st->listen, st->ip);
}

int xdp_steer_set_plan(struct xdp_steer *st, const struct flow_plan *plan,
		       enum flow_listen_mode mode)
{
	struct flow_plan check;

	if (!st || st->cfg_fd < 0 || !plan)
		return -EINVAL;
	if (mode != FLOW_LISTEN_LOW_BITS && mode != FLOW_LISTEN_RSS)
		return -EINVAL;
	/* The program trusts the map: only a plan flow_plan_init() accepts. */
	if (flow_plan_init(&check, plan->n_queues, plan->lo, plan->hi, NULL, 0) < 0)
		return -EINVAL;
	return write_cfg(st, plan->lo, plan->hi, (uint16_t)plan->n_queues, (uint16_t)mode, st->ip);
}

static int set_port(struct xdp_steer *st, uint16_t port, uint32_t val)
{
	uint32_t key = port;

	if (!st || st->ports_fd < 0)
		return -EINVAL;
	return bpf_map_update_elem(st->ports_fd, &key, &val, BPF_ANY) ? -errno : 0;
}

int xdp_steer_add_port(struct xdp_steer *st, uint16_t port)
{
	return set_port(st, port, 1);
}

int xdp_steer_del_port(struct xdp_steer *st, uint16_t port)
{
	return set_port(st, port, 0);
}

int xdp_steer_set_cookie(struct xdp_steer *st, uint32_t queue, const struct lunar_cookie_cfg *cfg)
{
	if (!st || st->cookie_fd < 0 || !cfg || queue >= LUNAR_STEER_MAX_QUEUES)
		return -EINVAL;
	return bpf_map_update_elem(st->cookie_fd, &queue, cfg, BPF_ANY) ? -errno : 0;
}

int xdp_steer_counters(const struct xdp_steer *st, uint32_t queue, struct xdp_steer_counters *out)
{
	uint64_t sum[LUNAR_STEER_NSTATS] = {0};
	uint32_t first = 0, last = LUNAR_STEER_STAT_ROWS - 1;
	uint64_t *vals;
	int ncpu, ret = 0;

	if (!st || st->stats_fd < 0 || !out)
		return -EINVAL;
	if (queue != XDP_STEER_ALL_QUEUES) {
		if (queue >= LUNAR_STEER_STAT_ROWS)
			return -EINVAL;
		first = last = queue;
	}
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	/* A per-CPU lookup returns one 8-byte-aligned value per possible CPU. */
	vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t row = first; row <= last; row++) {
		for (uint32_t s = 0; s < LUNAR_STEER_NSTATS; s++) {
			uint32_t k = row * LUNAR_STEER_NSTATS + s;

			if (bpf_map_lookup_elem(st->stats_fd, &k, vals)) {
				ret = -errno;
				goto out;
			}
			for (int c = 0; c < ncpu; c++)
				sum[s] += vals[c];
		}
	}
	*out = (struct xdp_steer_counters){
	    .to_lunar = sum[LUNAR_STEER_TO_LUNAR],
	    .to_kernel = sum[LUNAR_STEER_TO_KERNEL],
	    .redirect_failed = sum[LUNAR_STEER_REDIRECT_FAILED],
	    .misqueued = sum[LUNAR_STEER_MISQUEUED],
	    .syncookies = sum[LUNAR_STEER_SYNCOOKIE],
	};
out:
	free(vals);
	return ret;
}

int xdp_steer_stats(struct xdp_steer *st, uint64_t *to_lunar, uint64_t *to_kernel,
		    uint64_t *redirect_failed)
{
	struct xdp_steer_counters c;
	int ret = xdp_steer_counters(st, XDP_STEER_ALL_QUEUES, &c);

	if (ret < 0)
		return ret;
	if (to_lunar)
		*to_lunar = c.to_lunar;
	if (to_kernel)
		*to_kernel = c.to_kernel;
	if (redirect_failed)
		*redirect_failed = c.redirect_failed;
	return 0;
}

void xdp_steer_close(struct xdp_steer *st)
{
	if (!st)
		return;
	int *fds[] = {&st->cfg_fd, &st->ports_fd, &st->stats_fd, &st->cookie_fd};

	for (size_t i = 0; i < ARRAY_SIZE(fds); i++) {
		/*
		 * "> 0", not ">= 0": a zeroed handle must not close stdin; a
		 * map fd is never 0 while stdin is open.
		 */
		if (*fds[i] > 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int xdp_detach_lunar(const char *ifname)
{
	char name[BPF_OBJ_NAME_LEN];
	const char *mode;
	uint32_t id;
	int ifindex = ifindex_of(ifname, NULL, 0);

	if (ifindex < 0)
		return ifindex;
	if (attached_prog(ifindex, &id, &mode) < 0 || !id)
		return 0;
	prog_name(id, name, sizeof(name));
	if (strcmp(name, "lunar_steer"))
		return -EPERM; /* someone else's program: not ours to remove */
	return xdp_detach(ifname);
}

int xdp_detach(const char *ifname)
{
	static const uint32_t modes[] = {XDP_FLAGS_DRV_MODE, XDP_FLAGS_SKB_MODE};
	int ifindex, ret = 0;

	ifindex = ifindex_of(ifname, NULL, 0);
	if (ifindex < 0)
		return ifindex;
	/* Try both modes: a stale program may sit in either; keep the first error. */
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		int r = bpf_xdp_detach(ifindex, modes[i], NULL);

		if (r < 0 && !ret)
			ret = r;
	}
	return ret;
}
