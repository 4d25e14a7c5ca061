/*
 * jscan.c - a streaming JSON tokenizer (jscan.h).
 *
 * Why not yajl: its lexer and its parser's stack cost two thirds of the
 * time of mxprof report, which spends most of a trace's bytes on short
 * keys, short strings and numbers. Here one loop reads a token where it
 * lies in the caller's buffer and hands it over without a copy (unless
 * it has escapes); the grammar is one state and a stack of one byte per
 * open container.
 *
 * A token that the end of a piece cuts in two is not consumed: the scan
 * stops at its first byte and the caller feeds it again with the next
 * piece, so a token is always seen whole. Tokens are short (the reader
 * caps them at 1 MiB), so scanning one again costs little.
 *
 * Errors point at the offending byte itself, so that a reader can tell a
 * file cut short (the rest is NUL bytes from there) from a corrupt one.
 */
#include <stdlib.h>
#include <string.h>

#include "jscan.h"

/* What may come next. */
enum {
	S_VALUE,       /* a value: at the top, after ':' or after ',' in [] */
	S_FIRST_VALUE, /* after '[': a value or ']'                         */
	S_FIRST_KEY,   /* after '{': a key or '}'                           */
	S_KEY,	       /* after ',' in {}: a key                            */
	S_COLON,       /* after a key                                      */
	S_NEXT,	       /* after a value in a container: ',' or its close   */
	S_DONE,	       /* the top-level value ended                        */
};

/* Blanks between tokens. */
static const unsigned char js_ws[256] = {
	[' '] = 1,
	['\t'] = 1,
	['\n'] = 1,
	['\r'] = 1,
};

/* Bytes that end the plain run of a string: its close, an escape, or a
 * control character (an error). */
static const unsigned char js_stop[256] = {
	[0x00 ... 0x1f] = 1,
	['"'] = 1,
	['\\'] = 1,
};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define JS_WORDS 1
static const uint64_t js_ones = 0x0101010101010101ull;
static const uint64_t js_highs = 0x8080808080808080ull;

/* The bytes of the word v (its 8 bytes in memory order) that js_stop
 * flags: each such byte's high bit set in the result. A byte of x is zero
 * when (x - 1) borrows into its high bit while x's own is clear; the
 * lowest flag found is exact, borrows only add flags above it. */
static inline uint64_t js_stops(uint64_t v)
{
	uint64_t quote = v ^ (js_ones * '"'), bslash = v ^ (js_ones * '\\');

	quote = (quote - js_ones) & ~quote;
	bslash = (bslash - js_ones) & ~bslash;
	return (quote | bslash | ((v - js_ones * 0x20) & ~v)) & js_highs;
}
#endif

/* Returns the first byte from q on that ends a string's plain run (see
 * js_stop), or end. Eight bytes at a time where the machine is
 * little-endian: most names are longer than a word. */
const unsigned char *jscan_plain_run(const unsigned char *q,
				     const unsigned char *end)
{
#ifdef JS_WORDS
	for (; end - q >= 8; q += 8) {
		uint64_t v, m;

		memcpy(&v, q, 8);
		if ((m = js_stops(v)) != 0) {
			return q + (__builtin_ctzll(m) >> 3);
		}
	}
#endif
	while (q < end && !js_stop[*q]) {
		q++;
	}
	return q;
}

/* Returns the first byte from q on that is not printable ASCII standing
 * for itself in a string (see jscan.h), or end. Eight bytes at a time, as
 * jscan_plain_run(). */
const unsigned char *jscan_ascii_run(const unsigned char *q,
				     const unsigned char *end)
{
#ifdef JS_WORDS
	for (; end - q >= 8; q += 8) {
		uint64_t v, m;

		memcpy(&v, q, 8);
		/* v's own high bits flag the bytes past ASCII. */
		if ((m = js_stops(v) | (v & js_highs)) != 0) {
			return q + (__builtin_ctzll(m) >> 3);
		}
	}
#endif
	while (q < end && !js_stop[*q] && *q < 0x80) {
		q++;
	}
	return q;
}

/* Sets up js for a fresh text. This function can't fail. */
void jscan_init(struct jscan *js, const struct jscan_cb *cb, void *ctx)
{
	memset(js, 0, sizeof(*js));
	js->cb = cb;
	js->ctx = ctx;
	js->state = S_VALUE;
}

/* Tells whether a value of an array comes next (jscan.h). */
int jscan_array_value(const struct jscan *js)
{
	return (js->state == S_VALUE || js->state == S_FIRST_VALUE) &&
	       js->depth > 0 && !js->stack[js->depth - 1];
}

/* Moves js past values the caller took itself (jscan.h). */
void jscan_skip_values(struct jscan *js, uint64_t at, int after_value,
		       unsigned long n)
{
	js->base = at;
	js->tokens += n;
	if (after_value) {
		js->state = S_NEXT;
	} else if (n) {
		js->state = S_VALUE;
	}
}

/* Frees the stack and the scratch buffer. This function can't fail. */
void jscan_free(struct jscan *js)
{
	free(js->stack);
	free(js->str);
	js->stack = js->str = NULL;
	js->stack_cap = js->str_cap = 0;
}

/* Opens a container. Returns 0, or -1 with js->err set. */
static int js_push(struct jscan *js, unsigned char is_map)
{
	if (js->depth == js->stack_cap) {
		size_t cap = js->stack_cap ? js->stack_cap * 2 : 64;
		unsigned char *s;

		if (js->depth >= JSCAN_DEPTH_MAX) {
			js->err = "nested too deeply";
			return -1;
		}
		s = realloc(js->stack, cap);
		if (!s) {
			js->err = "out of memory";
			return -1;
		}
		js->stack = s;
		js->stack_cap = cap;
	}
	js->stack[js->depth++] = is_map;
	return 0;
}

/* The value of hex digit c, or -1. */
static int js_hex(unsigned char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	c |= 0x20;
	if (c >= 'a' && c <= 'f') {
		return c - 'a' + 10;
	}
	return -1;
}

/* Reads the four hex digits at q into *cp. Returns 1, 0 when end comes
 * first, or -1 with *bad at the digit that is not one. */
static int js_hex4(const unsigned char *q, const unsigned char *end,
		   unsigned *cp, const unsigned char **bad)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		int d;

		if (q + i >= end) {
			return 0;
		}
		d = js_hex(q[i]);
		if (d < 0) {
			*bad = q + i;
			return -1;
		}
		v = v << 4 | (unsigned)d;
	}
	*cp = v;
	return 1;
}

/* Writes code point cp as UTF-8 at o. Returns the byte count. */
static size_t js_utf8(unsigned char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (unsigned char)(0xc0 | cp >> 6);
		o[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (unsigned char)(0xe0 | cp >> 12);
		o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (unsigned char)(0xf0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * Decodes the string whose text starts at s (after its quote) and whose
 * first escape is at q, into js->str. Returns 1 with *out, *n and *next
 * (past the closing quote) set; 0 when end comes before the close; -1
 * with js->err set and *bad at the offending byte. The decoded text is
 * never longer than the raw one, so js->str is sized once, to what is
 * left of the piece.
 */
static int js_unescape(struct jscan *js, const unsigned char *s,
		       const unsigned char *q, const unsigned char *end,
		       const unsigned char **out, size_t *n,
		       const unsigned char **next, const unsigned char **bad)
{
	size_t need = (size_t)(end - s);
	unsigned char *o;

	if (need > js->str_cap) {
		unsigned char *p = realloc(js->str, need);

		if (!p) {
			js->err = "out of memory";
			*bad = s;
			return -1;
		}
		js->str = p;
		js->str_cap = need;
	}
	memcpy(js->str, s, (size_t)(q - s));
	o = js->str + (q - s);
	while (q < end) {
		unsigned cp, lo;
		int r;

		if (!js_stop[*q]) {
			*o++ = *q++;
			continue;
		}
		if (*q == '"') {
			*out = js->str;
			*n = (size_t)(o - js->str);
			*next = q + 1;
			return 1;
		}
		if (*q != '\\') {
			js->err = "a control character inside a string";
			*bad = q;
			return -1;
		}
		if (q + 1 >= end) {
			return 0;
		}
		switch (q[1]) {
		case '"':
		case '\\':
		case '/':
			*o++ = q[1];
			q += 2;
			continue;
		case 'b':
			*o++ = '\b';
			q += 2;
			continue;
		case 'f':
			*o++ = '\f';
			q += 2;
			continue;
		case 'n':
			*o++ = '\n';
			q += 2;
			continue;
		case 'r':
			*o++ = '\r';
			q += 2;
			continue;
		case 't':
			*o++ = '\t';
			q += 2;
			continue;
		case 'u':
			break;
		default:
			js->err = "an invalid escape inside a string";
			*bad = q + 1;
			return -1;
		}
		r = js_hex4(q + 2, end, &cp, bad);
		if (r <= 0) {
			if (r < 0) {
				js->err = "\\u without four hex digits";
			}
			return r;
		}
		q += 6;
		if (cp >= 0xd800 && cp <= 0xdbff) {
			/* A high surrogate joins the low one that follows;
			 * without one it stands for nothing: U+FFFD. */
			if (q + 2 > end) {
				return 0;
			}
			if (q[0] == '\\' && q[1] == 'u') {
				r = js_hex4(q + 2, end, &lo, bad);
				if (r < 0) {
					js->err = "\\u without four hex digits";
				}
				if (r <= 0) {
					return r;
				}
				if (lo >= 0xdc00 && lo <= 0xdfff) {
					cp = 0x10000 + ((cp - 0xd800) << 10) +
					     (lo - 0xdc00);
					q += 6;
				} else {
					cp = 0xfffd;
				}
			} else {
				cp = 0xfffd;
			}
		} else if (cp >= 0xdc00 && cp <= 0xdfff) {
			cp = 0xfffd;
		}
		o += js_utf8(o, cp);
	}
	return 0;
}

/* Scans the number at tok (see jscan.h). */
long jscan_number(const unsigned char *tok, const unsigned char *end, int last,
		  const char **err, const unsigned char **bad)
{
	const unsigned char *q = tok;

#define JS_DIGIT(c) ((unsigned)((c) - '0') < 10)
	if (*q == '-') {
		if (++q == end) {
			return 0;
		}
		if (!JS_DIGIT(*q)) {
			*err = "a digit must follow the minus sign";
			goto error;
		}
	}
	if (*q == '0') {
		q++;
	} else {
		while (q < end && JS_DIGIT(*q)) {
			q++;
		}
	}
	if (q < end && *q == '.') {
		if (++q == end) {
			return 0;
		}
		if (!JS_DIGIT(*q)) {
			*err = "a digit must follow the decimal point";
			goto error;
		}
		while (q < end && JS_DIGIT(*q)) {
			q++;
		}
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		if (++q == end) {
			return 0;
		}
		if ((*q == '+' || *q == '-') && ++q == end) {
			return 0;
		}
		if (!JS_DIGIT(*q)) {
			*err = "a digit must follow the exponent";
			goto error;
		}
		while (q < end && JS_DIGIT(*q)) {
			q++;
		}
	}
#undef JS_DIGIT
	if (q == end && !last) {
		return 0;
	}
	return (long)(q - tok);
error:
	*bad = q;
	return -1;
}

/* Matches the literal word (true, false, null) at tok. Returns 1, 0 when
 * end cuts it short, or -1 with js->err and *bad set. */
static int js_literal(struct jscan *js, const unsigned char *tok,
		      const unsigned char *end, const char *word,
		      const unsigned char **bad)
{
	for (size_t i = 0; word[i]; i++) {
		if (tok + i == end) {
			return 0;
		}
		if (tok[i] != (unsigned char)word[i]) {
			js->err = "an invalid literal (true, false or null)";
			*bad = tok + i;
			return -1;
		}
	}
	return 1;
}

/* The phrase for a byte that may not come in state. */
static const char *js_unexpected(const struct jscan *js, int state)
{
	switch (state) {
	case S_VALUE:
	case S_FIRST_VALUE:
		return "a value was expected";
	case S_FIRST_KEY:
	case S_KEY:
		return "an object key (a string) was expected";
	case S_COLON:
		return "':' was expected after an object key";
	default:
		return js->depth && js->stack[js->depth - 1]
			       ? "',' or '}' was expected after an object "
				 "member"
			       : "',' or ']' was expected after an array "
				 "element";
	}
}

/* Scans a piece of the text (see jscan.h). */
enum jscan_status jscan_feed(struct jscan *js, const unsigned char *buf,
			     size_t len, int last, size_t *used)
{
	const struct jscan_cb *cb = js->cb;
	const unsigned char *p = buf, *end = buf + len, *tok, *bad = NULL;
	enum jscan_status st = JSCAN_MORE;
	int state = js->state;

/* Calls handler H of cb with ctx and the arguments after it; a handler
 * that returns 0 stops the scan past the token. */
#define JS_CALL(H, ...)                                                        \
	do {                                                                   \
		js->tokens++;                                                  \
		if (cb->H && !cb->H(js->ctx, ##__VA_ARGS__)) {                 \
			st = JSCAN_STOPPED;                                    \
			goto out;                                              \
		}                                                              \
	} while (0)

	for (;;) {
		while (p < end && js_ws[*p]) {
			p++;
		}
		if (p == end) {
			break;
		}
		tok = p;
		switch (*p) {
		case '"': {
			const unsigned char *s = p + 1, *q = s, *str, *next;
			size_t n;
			int r = 1;

			if (state != S_KEY && state != S_FIRST_KEY &&
			    state != S_VALUE && state != S_FIRST_VALUE) {
				goto unexpected;
			}
			q = jscan_plain_run(q, end);
			if (q < end && *q == '"') {
				str = s;
				n = (size_t)(q - s);
				next = q + 1;
			} else if (q < end && *q != '\\') {
				js->err = "a control character inside a "
					  "string";
				bad = q;
				goto error;
			} else if (q == end) {
				goto cut;
			} else {
				r = js_unescape(js, s, q, end, &str, &n, &next,
						&bad);
			}
			if (r < 0) {
				goto error;
			}
			if (r == 0) {
				goto cut;
			}
			p = next;
			if (state == S_KEY || state == S_FIRST_KEY) {
				/* The colon mostly follows at once. */
				state = S_COLON;
				if (p < end && *p == ':') {
					state = S_VALUE;
					p++;
				}
				JS_CALL(map_key, str, n);
				continue;
			}
			JS_CALL(string, str, n);
			break;
		}
		case ':':
			if (state != S_COLON) {
				goto unexpected;
			}
			state = S_VALUE;
			p++;
			continue;
		case ',':
			if (state != S_NEXT) {
				goto unexpected;
			}
			state = js->stack[js->depth - 1] ? S_KEY : S_VALUE;
			p++;
			continue;
		case '{':
		case '[':
			if (state != S_VALUE && state != S_FIRST_VALUE) {
				goto unexpected;
			}
			if (*p == '{' && cb->object) {
				long took = cb->object(js->ctx, p, end);
				if (took < 0) {
					st = JSCAN_STOPPED;
					goto out;
				}
				if (took > 0) {
					js->tokens++;
					p += took;
					break; /* a value ended */
				}
			}
			if (js_push(js, *p == '{') < 0) {
				bad = p;
				goto error;
			}
			p++;
			if (*tok == '{') {
				state = S_FIRST_KEY;
				JS_CALL(start_map);
			} else {
				state = S_FIRST_VALUE;
				JS_CALL(start_array);
			}
			continue;
		case '}':
			if (state != S_FIRST_KEY &&
			    (state != S_NEXT || !js->stack[js->depth - 1])) {
				goto unexpected;
			}
			js->depth--;
			p++;
			JS_CALL(end_map);
			break;
		case ']':
			if (state != S_FIRST_VALUE &&
			    (state != S_NEXT || js->stack[js->depth - 1])) {
				goto unexpected;
			}
			js->depth--;
			p++;
			JS_CALL(end_array);
			break;
		case '-':
		case '0' ... '9': {
			long n;

			if (state != S_VALUE && state != S_FIRST_VALUE) {
				goto unexpected;
			}
			n = jscan_number(p, end, last, &js->err, &bad);
			if (n < 0) {
				goto error;
			}
			if (n == 0) {
				goto cut;
			}
			p += n;
			JS_CALL(number, (const char *)tok, (size_t)n);
			break;
		}
		case 't':
		case 'f':
		case 'n': {
			const char *word = *p == 't'   ? "true"
					   : *p == 'f' ? "false"
						       : "null";
			int r;

			if (state != S_VALUE && state != S_FIRST_VALUE) {
				goto unexpected;
			}
			r = js_literal(js, p, end, word, &bad);
			if (r < 0) {
				goto error;
			}
			if (r == 0) {
				goto cut;
			}
			p += strlen(word);
			if (*tok == 'n') {
				JS_CALL(null);
			} else {
				JS_CALL(boolean, *tok == 't');
			}
			break;
		}
		default:
			goto unexpected;
		}
		/* A value ended: the top-level one ends the text. */
		if (js->depth == 0) {
			state = S_DONE;
			st = JSCAN_DONE;
			break;
		}
		state = S_NEXT;
		/* The comma mostly follows at once. */
		if (p < end && *p == ',') {
			state = js->stack[js->depth - 1] ? S_KEY : S_VALUE;
			p++;
		}
	}
#undef JS_CALL
	goto out;
cut:
	p = tok;
	goto out;
unexpected:
	js->err = js_unexpected(js, state);
	bad = p;
error:
	js->err_at = js->base + (uint64_t)(bad - buf);
	st = JSCAN_ERROR;
out:
	js->state = state;
	*used = (size_t)(p - buf);
	js->base += *used;
	return st;
}
