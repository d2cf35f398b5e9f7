/* numalot: the agent's protocol: framing and request decoding. */
#include "protocol.h"
#include "strict.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *const op_names[NL_OP_COUNT] = {
	"hello", "register", "unregister", "report", "status"};

const char *nl_proto_op_name(enum nl_op op)
{
	return (unsigned)op < NL_OP_COUNT ? op_names[op] : "?";
}

static int get_u32(struct json_object *o, const char *key, uint32_t *out,
		   int required, char *err, size_t errlen)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		return required ? nl_errf(err, errlen, -EINVAL,
					  "\"%s\" is missing", key)
				: 1;
	if (!json_object_is_type(v, json_type_int))
		return nl_errf(err, errlen, -EINVAL,
			       "\"%s\" must be a whole number", key);
	int64_t x = json_object_get_int64(v);
	if (x < 0 || x > UINT32_MAX)
		return nl_errf(err, errlen, -EINVAL, "\"%s\" is out of range",
			       key);
	*out = (uint32_t)x;
	return 0;
}

static int get_str(struct json_object *o, const char *key, char *out,
		   size_t size, int required, char *err, size_t errlen)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, key, &v))
		return required ? nl_errf(err, errlen, -EINVAL,
					  "\"%s\" is missing", key)
				: 1;
	if (!json_object_is_type(v, json_type_string))
		return nl_errf(err, errlen, -EINVAL, "\"%s\" must be a string",
			       key);
	const char *s = json_object_get_string(v);
	size_t n = (size_t)json_object_get_string_len(v);
	if (n >= size || strlen(s) != n)
		return nl_errf(err, errlen, -EINVAL,
			       "\"%s\" is too long or holds a NUL", key);
	memcpy(out, s, n + 1);
	return 0;
}

static int decode_params(struct json_object *o, struct nl_request *r, char *err,
			 size_t errlen)
{
	struct json_object *p;
	if (!json_object_object_get_ex(o, "params", &p))
		return 0;
	if (!json_object_is_type(p, json_type_object))
		return nl_errf(err, errlen, -EINVAL,
			       "\"params\" must be an object");
	json_object_object_foreach(p, key, val)
	{
		if (r->nparams == NL_PROTO_MAX_PARAMS)
			return nl_errf(err, errlen, -EINVAL,
				       "\"params\": more than %d",
				       NL_PROTO_MAX_PARAMS);
		if (!json_object_is_type(val, json_type_string))
			return nl_errf(err, errlen, -EINVAL,
				       "\"params.%.40s\" must be a string",
				       key);
		const char *v = json_object_get_string(val);
		if (strlen(key) >= sizeof(r->param_key[0]) ||
		    strlen(v) >= sizeof(r->param_value[0]))
			return nl_errf(err, errlen, -EINVAL,
				       "\"params.%.40s\" is too long", key);
		strcpy(r->param_key[r->nparams], key);
		strcpy(r->param_value[r->nparams], v);
		r->nparams++;
	}
	return 0;
}

static int decode_fields(struct json_object *o, struct nl_request *r, char *err,
			 size_t errlen)
{
	char op[24];
	int rc;
	uint32_t v, pid;

	if ((rc = get_u32(o, "v", &v, 1, err, errlen)))
		return rc;
	r->version = (int)v;
	if (r->version != NL_PROTO_VERSION) {
		nl_errf(err, errlen, -EINVAL,
			"protocol version %u is not supported (this agent "
			"speaks "
			"%d)",
			v, NL_PROTO_VERSION);
		return -EPROTO;
	}
	if ((rc = get_str(o, "op", op, sizeof(op), 1, err, errlen)))
		return rc;
	r->op = NL_OP_COUNT;
	for (int i = 0; i < NL_OP_COUNT; i++)
		if (!strcmp(op, op_names[i]))
			r->op = (enum nl_op)i;
	if (r->op == NL_OP_COUNT)
		return nl_errf(err, errlen, -EINVAL,
			       "unknown op \"%s\" (valid: hello, register, "
			       "unregister, report, status)",
			       op);
	if (r->op == NL_OP_HELLO || r->op == NL_OP_STATUS)
		return 0;
	if ((rc = get_u32(o, "job", &r->job, 1, err, errlen)) ||
	    (rc = get_u32(o, "step", &r->step, 1, err, errlen)))
		return rc;
	r->has_step = 1;
	if (r->op != NL_OP_REGISTER) {
		/* Optional: whose step (root may name the user). */
		rc = get_u32(o, "uid", &r->uid, 0, err, errlen);
		if (rc < 0)
			return rc;
		r->has_uid = rc == 0;
		return 0;
	}
	if ((rc = get_u32(o, "uid", &r->uid, 1, err, errlen)) ||
	    (rc = get_u32(o, "pid", &pid, 1, err, errlen)) ||
	    (rc = get_str(o, "policy", r->policy, sizeof(r->policy), 1, err,
			  errlen)) ||
	    (rc = get_str(o, "cpus", r->cpus, sizeof(r->cpus), 1, err, errlen)))
		return rc;
	r->has_uid = 1;
	if (pid == 0 || pid > 0x3fffffff)
		return nl_errf(err, errlen, -EINVAL, "\"pid\" is out of range");
	r->pid = (pid_t)pid;
	struct json_object *p;
	if (json_object_object_get_ex(o, "period", &p)) {
		if (!json_object_is_type(p, json_type_double) &&
		    !json_object_is_type(p, json_type_int))
			return nl_errf(err, errlen, -EINVAL,
				       "\"period\" must be a number");
		r->period_s = json_object_get_double(p);
		if (!isfinite(r->period_s) || r->period_s <= 0 ||
		    r->period_s > 86400)
			return nl_errf(err, errlen, -EINVAL,
				       "\"period\" must be above 0 and at most "
				       "86400 seconds");
	}
	rc = get_str(o, "report", r->report, sizeof(r->report), 0, err, errlen);
	if (rc < 0)
		return rc;
	if (rc == 0 && r->report[0] != '/')
		return nl_errf(err, errlen, -EINVAL,
			       "\"report\" must be an absolute path");
	rc = get_u32(o, "gid", &r->gid, 0, err, errlen);
	if (rc < 0)
		return rc;
	r->has_gid = rc == 0;
	rc = get_str(o, "node", r->node, sizeof(r->node), 0, err, errlen);
	if (rc < 0)
		return rc;
	if (r->node[0] && !nl_node_name_ok(r->node))
		return nl_errf(err, errlen, -EINVAL,
			       "\"node\" must be letters, digits, '.', '_' "
			       "and '-', not starting with '.'");
	return decode_params(o, r, err, errlen);
}

int nl_node_name_ok(const char *name)
{
	if (!name || !name[0] || name[0] == '.' || strlen(name) >= 64)
		return 0;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("._-", *c))
			return 0;
	return 1;
}

int nl_proto_decode(const char *body, size_t len, struct nl_request *req,
		    char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	size_t at;
	int rc;

	memset(req, 0, sizeof(*req));
	if (len > NL_PROTO_MAX_BYTES)
		return nl_errf(err, errlen, -EINVAL,
			       "request of %zu bytes is over the %d "
			       "byte limit",
			       len, NL_PROTO_MAX_BYTES);
	/* One strict JSON object (docs/protocol.md, "Framing"). */
	const char *why = nl_json_not_strict(body, len, &at);
	if (why)
		return nl_errf(err, errlen, -EINVAL,
			       "request is not one JSON value (byte %zu: %s)",
			       at, why);
	tok = json_tokener_new_ex(16);
	if (!tok)
		return -ENOMEM;
	/* Invalid UTF-8 is refused, never decoded into a field (and echoed
	 * in a message). */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	o = json_tokener_parse_ex(tok, body, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!o || jerr != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != len) {
		rc = nl_errf(err, errlen, -EINVAL,
			     "request is not one JSON value (byte %zu: %s)",
			     json_tokener_get_parse_end(tok),
			     jerr == json_tokener_continue ? "it ends too soon"
			     : jerr == json_tokener_success
				     ? "more after it"
				     : json_tokener_error_desc(jerr));
	} else if (!json_object_is_type(o, json_type_object)) {
		rc = nl_errf(err, errlen, -EINVAL,
			     "request must be a JSON object");
	} else {
		rc = decode_fields(o, req, err, errlen);
	}
	json_object_put(o);
	json_tokener_free(tok);
	return rc;
}

char *nl_proto_encode(const struct nl_request *r)
{
	struct json_object *o = json_object_new_object();
	char *s;

	json_object_object_add(o, "v", json_object_new_int(NL_PROTO_VERSION));
	json_object_object_add(o, "op",
			       json_object_new_string(nl_proto_op_name(r->op)));
	if (r->has_step) {
		json_object_object_add(o, "job", json_object_new_int64(r->job));
		json_object_object_add(o, "step",
				       json_object_new_int64(r->step));
	}
	if (r->has_uid)
		json_object_object_add(o, "uid", json_object_new_int64(r->uid));
	if (r->op == NL_OP_REGISTER) {
		struct json_object *p = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int64(r->pid));
		json_object_object_add(o, "policy",
				       json_object_new_string(r->policy));
		json_object_object_add(o, "cpus",
				       json_object_new_string(r->cpus));
		if (r->period_s > 0)
			json_object_object_add(
				o, "period",
				json_object_new_double(r->period_s));
		for (int i = 0; i < r->nparams; i++)
			json_object_object_add(
				p, r->param_key[i],
				json_object_new_string(r->param_value[i]));
		json_object_object_add(o, "params", p);
		if (r->report[0])
			json_object_object_add(
				o, "report", json_object_new_string(r->report));
		if (r->has_gid)
			json_object_object_add(o, "gid",
					       json_object_new_int64(r->gid));
		if (r->node[0])
			json_object_object_add(o, "node",
					       json_object_new_string(r->node));
	}
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return s;
}

/* Move len bytes through fd, in or out, before the deadline. */
static int xfer(int fd, void *buf, size_t len, int out, double deadline)
{
	size_t done = 0;
	while (done < len) {
		int left = (int)(deadline - (nl_mono_s() * 1e3));
		struct pollfd p = {fd, out ? POLLOUT : POLLIN, 0};
		if (left <= 0)
			return -ETIMEDOUT;
		int rc = poll(&p, 1, left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0)
			return -errno;
		if (rc == 0)
			return -ETIMEDOUT;
		ssize_t n = out ? send(fd, (char *)buf + done, len - done,
				       MSG_NOSIGNAL | MSG_DONTWAIT)
				: recv(fd, (char *)buf + done, len - done,
				       MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		done += (size_t)n;
	}
	return 0;
}

static int send_until(int fd, const char *body, size_t len, double deadline)
{
	unsigned char hdr[4];
	int rc;

	if (len > NL_PROTO_MAX_REPLY)
		return -EMSGSIZE;
	hdr[0] = (unsigned char)(len >> 24);
	hdr[1] = (unsigned char)(len >> 16);
	hdr[2] = (unsigned char)(len >> 8);
	hdr[3] = (unsigned char)len;
	rc = xfer(fd, hdr, 4, 1, deadline);
	return rc ? rc : xfer(fd, (void *)body, len, 1, deadline);
}

int nl_proto_send(int fd, const char *body, size_t len, int timeout_ms)
{
	return send_until(fd, body, len, nl_mono_s() * 1e3 + timeout_ms);
}

static int recv_limited(int fd, char **body, size_t *len, double deadline,
			size_t limit)
{
	unsigned char hdr[4];
	size_t n;
	int rc;

	*body = NULL;
	rc = xfer(fd, hdr, 4, 0, deadline);
	if (rc)
		return rc;
	n = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 |
	    hdr[3];
	if (n > limit)
		return -EMSGSIZE;
	*body = malloc(n + 1);
	if (!*body)
		return -ENOMEM;
	rc = xfer(fd, *body, n, 0, deadline);
	if (rc) {
		free(*body);
		*body = NULL;
		return rc;
	}
	(*body)[n] = 0;
	if (len)
		*len = n;
	return 0;
}

int nl_proto_recv(int fd, char **body, size_t *len, int timeout_ms)
{
	return recv_limited(fd, body, len, nl_mono_s() * 1e3 + timeout_ms,
			    NL_PROTO_MAX_BYTES);
}

/* Connect without blocking past the deadline (a full backlog). */
static int connect_until(int fd, const struct sockaddr_un *sa, double deadline)
{
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0)
		return 0;
	if (errno != EAGAIN && errno != EINPROGRESS)
		return -errno;
	for (;;) {
		int left = (int)(deadline - nl_mono_s() * 1e3);
		struct pollfd p = {fd, POLLOUT, 0};
		if (left <= 0)
			return -ETIMEDOUT;
		int rc = poll(&p, 1, left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return rc < 0 ? -errno : -ETIMEDOUT;
		/* A UNIX socket with a full backlog says EAGAIN: try again. */
		if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) ==
			    0 ||
		    errno == EISCONN)
			return 0;
		if (errno != EAGAIN && errno != EINPROGRESS &&
		    errno != EALREADY)
			return -errno;
		usleep(10000);
	}
}

int nl_proto_call(const char *socket_path, const char *request, char **reply,
		  int timeout_ms, int flags)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	double deadline = nl_mono_s() * 1e3 + timeout_ms;
	int fd, rc;

	*reply = NULL;
	if (strlen(socket_path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	rc = connect_until(fd, &sa, deadline);
	if (rc == 0 && (flags & NL_CALL_ROOT_AGENT)) {
		/* Only an agent running as root is the node's agent. */
		struct ucred cred;
		socklen_t len = sizeof(cred);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		    cred.uid != 0)
			rc = -EPERM;
	}
	if (rc == 0)
		rc = send_until(fd, request, strlen(request), deadline);
	if (rc == 0)
		rc = recv_limited(fd, reply, NULL, deadline,
				  NL_PROTO_MAX_REPLY);
	close(fd);
	return rc;
}
