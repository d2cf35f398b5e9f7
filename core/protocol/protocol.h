/*
 * numalot: the agent's protocol (docs/protocol.md). A UNIX stream socket;
 * each connection carries one request and one reply, each a frame: a 4-byte
 * big-endian length, then that many bytes of one JSON object.
 */
#ifndef NUMALOT_PROTOCOL_H
#define NUMALOT_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define NL_PROTO_VERSION 1
#define NL_PROTO_MAX_BYTES 65536
#define NL_PROTO_MAX_PARAMS 32
#define NL_PROTO_MAX_REPLY (16 * 1024 * 1024)

enum nl_op {
	NL_OP_HELLO,	  /* who are you (version, pid) */
	NL_OP_REGISTER,	  /* manage one task of a job step */
	NL_OP_UNREGISTER, /* the step ended: final report, forget it */
	NL_OP_REPORT,	  /* the step's report so far */
	NL_OP_STATUS,	  /* the steps the peer may see */
	NL_OP_COUNT
};

struct nl_request {
	int version;
	enum nl_op op;
	uint32_t job, step;
	int has_step; /* job and step were given */
	uint32_t uid; /* register: the job's user */
	int has_uid;
	pid_t pid;	 /* register: the task */
	char policy[16]; /* register */
	double period_s; /* register, 0: the agent's default */
	char cpus[1024]; /* register: the task's allowed CPUs (OS list) */
	int nparams;	 /* register: policy parameters */
	char param_key[NL_PROTO_MAX_PARAMS][48];
	char param_value[NL_PROTO_MAX_PARAMS][48];
	/* register, from root only: where the step's user wants the report
	 * (an absolute path) and the job's group, so that an agent that is
	 * stopped can hand each step's report to its user. "" none. */
	char report[1024];
	uint32_t gid;
	int has_gid;
	/* register, from root only: Slurm's name of the node (its reports
	 * and site copies say it; "" the agent's host name). */
	char node[64];
};

/*
 * Decode and check one request body (JSON text of len bytes, not
 * NUL-terminated). Returns 0, or -EINVAL with err naming the bad part;
 * -EPROTO for an unsupported version. Never reads past len.
 */
int nl_proto_decode(const char *body, size_t len, struct nl_request *req,
		    char *err, size_t errlen);

/* Encode a request as JSON text (malloc'd). */
char *nl_proto_encode(const struct nl_request *req);

const char *nl_proto_op_name(enum nl_op op);

/* 1 when name may stand in a file name as a node's: 1 to 63 letters,
 * digits, '.', '_' and '-', not starting with '.'; else 0. */
int nl_node_name_ok(const char *name);

/*
 * Send / receive one frame on a socket, each step bounded by
 * timeout_ms. recv returns a malloc'd, NUL-terminated body. -ETIMEDOUT,
 * -EMSGSIZE (frame over NL_PROTO_MAX_BYTES), -ECONNRESET, -errno.
 */
int nl_proto_send(int fd, const char *body, size_t len, int timeout_ms);
int nl_proto_recv(int fd, char **body, size_t *len, int timeout_ms);

/* nl_proto_call flags: the agent must run as root (SO_PEERCRED). */
#define NL_CALL_ROOT_AGENT 1

/*
 * Client side: connect to the agent's socket, send the request, return
 * the reply body (malloc'd). The whole call, connect included, is bounded
 * by timeout_ms.
 */
int nl_proto_call(const char *socket_path, const char *request, char **reply,
		  int timeout_ms, int flags);

#endif
