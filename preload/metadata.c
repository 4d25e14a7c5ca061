/*
 * metadata.c - the pairs of mxprof_add_metadata() (api.c) and
 * MXPROF_METADATA: key-value pairs the program (or its environment) adds
 * to the trace's top level and the head of the tables, as PyTorch's
 * profiler add_metadata() does. The collector keeps them
 * (collector/meta.c); settings.c checks MXPROF_METADATA's syntax.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "source.h"
#include "preload.h"

/* The most bytes of a key or pair a message shows. */
#define QUOTE_MAX 64

/* Writes the first len bytes of s into buf (at least QUOTE_MAX * 4 + 4
 * bytes) for a message: control characters as \xHH, cut after QUOTE_MAX
 * bytes with "...". Returns buf. */
static char *quote(char *buf, const char *s, size_t len)
{
	char *q = buf;

	for (size_t i = 0; i < len && i < QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f) {
			q += sprintf(q, "\\x%02x", c);
		} else {
			*q++ = (char)c;
		}
	}
	strcpy(q, len > QUOTE_MAX ? "..." : "");
	return buf;
}

/* meta_set() with the line for a failure (a full list says so once).
 * Called at load too, inside preload_init_once(): it must not call it
 * again. */
int metadata_add(const char *key, const char *value)
{
	static int full_said;
	char k[QUOTE_MAX * 4 + 4];
	int rc = meta_set(key, value);

	if (rc == -EINVAL) {
		fprintf(stderr,
			"mxprof: add_metadata('%s'): a key of 1 to 255 bytes "
			"that the trace's top level does not use, and a value "
			"below 4096 bytes\n",
			key ? quote(k, key, strlen(key)) : "(null)");
	} else if (rc == -ENOSPC &&
		   !__atomic_exchange_n(&full_said, 1, __ATOMIC_RELAXED)) {
		fprintf(stderr,
			"mxprof: add_metadata('%s'): at most 64 keys; not "
			"added, nor any other new key\n",
			quote(k, key, strlen(key)));
	}
	return rc;
}

/* JSON text checked by json_value() and its helpers: each takes *p past
 * what it accepts and returns 0, or -1 for what is not JSON. depth
 * bounds the nesting. */
static int json_value(const char **p, int depth);

static void json_ws(const char **p)
{
	while (**p == ' ' || **p == '\t' || **p == '\n' || **p == '\r') {
		(*p)++;
	}
}

static int json_string(const char **p)
{
	const char *s = *p + 1;

	for (; *s != '"'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20) {
			return -1; /* the end, or a raw control character */
		}
		if (c == '\\') {
			s++;
			if (*s == 'u') {
				for (int i = 1; i <= 4; i++) {
					if (!strchr("0123456789abcdefABCDEF",
						    s[i]) ||
					    !s[i]) {
						return -1;
					}
				}
				s += 4;
			} else if (!*s || !strchr("\"\\/bfnrt", *s)) {
				return -1;
			}
		}
	}
	*p = s + 1;
	return 0;
}

static int json_digits(const char **p)
{
	const char *s = *p;

	while (**p >= '0' && **p <= '9') {
		(*p)++;
	}
	return *p > s ? 0 : -1;
}

static int json_number(const char **p)
{
	if (**p == '-') {
		(*p)++;
	}
	if (**p == '0') {
		(*p)++;
	} else if (json_digits(p) < 0) {
		return -1;
	}
	if (**p == '.') {
		(*p)++;
		if (json_digits(p) < 0) {
			return -1;
		}
	}
	if (**p == 'e' || **p == 'E') {
		(*p)++;
		if (**p == '+' || **p == '-') {
			(*p)++;
		}
		if (json_digits(p) < 0) {
			return -1;
		}
	}
	return 0;
}

/* The members of an object (close '}') or the items of an array (']'). */
static int json_list(const char **p, char close, int depth)
{
	(*p)++;
	json_ws(p);
	if (**p == close) {
		(*p)++;
		return 0;
	}
	for (;;) {
		json_ws(p);
		if (close == '}') {
			if (**p != '"' || json_string(p) < 0) {
				return -1;
			}
			json_ws(p);
			if (*(*p)++ != ':') {
				return -1;
			}
		}
		if (json_value(p, depth + 1) < 0) {
			return -1;
		}
		json_ws(p);
		if (**p == close) {
			(*p)++;
			return 0;
		}
		if (*(*p)++ != ',') {
			return -1;
		}
	}
}

static int json_value(const char **p, int depth)
{
	static const char *const words[] = {"true", "false", "null"};

	if (depth > 64) {
		return -1;
	}
	json_ws(p);
	switch (**p) {
	case '{':
		return json_list(p, '}', depth);
	case '[':
		return json_list(p, ']', depth);
	case '"':
		return json_string(p);
	default:
		break;
	}
	for (int i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);
		if (strncmp(*p, words[i], n) == 0) {
			*p += n;
			return 0;
		}
	}
	return json_number(p);
}

int metadata_add_json(const char *key, const char *json)
{
	char k[QUOTE_MAX * 4 + 4];
	const char *p = json;

	if (!json || json_value(&p, 0) < 0 || (json_ws(&p), *p)) {
		fprintf(stderr,
			"mxprof: add_metadata_json('%s'): the value is not "
			"JSON text\n",
			key ? quote(k, key, strlen(key)) : "(null)");
		return -EINVAL;
	}
	int rc = meta_set_json(key, json);
	if (rc == -EINVAL) {
		fprintf(stderr,
			"mxprof: add_metadata_json('%s'): a key of 1 to 255 "
			"bytes that the trace's top level does not use, and a "
			"value below 4096 bytes\n",
			key ? quote(k, key, strlen(key)) : "(null)");
	} else if (rc == -ENOSPC) {
		fprintf(stderr,
			"mxprof: add_metadata_json('%s'): at most 64 keys; "
			"not added\n",
			quote(k, key, strlen(key)));
	}
	return rc;
}

/* What MXPROF_METADATA could not add: how many of each problem, and the
 * first of each, for one line per problem. */
struct load_problems {
	size_t n;
	char first[QUOTE_MAX * 4 + 4];
	size_t first_len;
};

static void load_note(struct load_problems *pr, const char *s, size_t len)
{
	if (pr->n++ == 0) {
		quote(pr->first, s, len);
		pr->first_len = len;
	}
}

void metadata_load(const char *v)
{
	char key[META_KEY_MAX], value[META_VALUE_MAX];
	struct load_problems tolong = {0}, full = {0}, refused = {0};

	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		size_t kl = eq ? (size_t)(eq - p) : 0;
		size_t vl = eq ? len - kl - 1 : 0;
		if (eq && kl < sizeof(key) && vl < sizeof(value)) {
			memcpy(key, p, kl);
			key[kl] = 0;
			memcpy(value, eq + 1, vl);
			value[vl] = 0;
			int rc = meta_set(key, value);
			if (rc == -ENOSPC) {
				load_note(&full, key, kl);
			} else if (rc < 0) {
				load_note(&refused, key, kl);
			}
		} else {
			load_note(&tolong, p, len);
		}
		p += len;
		if (*p == ',') {
			p++;
		}
	}
	if (tolong.n) {
		fprintf(stderr,
			"mxprof: MXPROF_METADATA: %zu pair%s too long (keys "
			"below 256 bytes, values below 4096); left out (the "
			"first: '%s' (%zu bytes))\n",
			tolong.n, tolong.n == 1 ? "" : "s", tolong.first,
			tolong.first_len);
	}
	if (refused.n) {
		fprintf(stderr,
			"mxprof: MXPROF_METADATA: %zu key%s refused (the "
			"trace's top level uses it, or out of memory); left "
			"out (the first: '%s')\n",
			refused.n, refused.n == 1 ? "" : "s", refused.first);
	}
	if (full.n) {
		fprintf(stderr,
			"mxprof: MXPROF_METADATA: at most 64 keys; %zu left "
			"out (the first: '%s')\n",
			full.n, full.first);
	}
}
