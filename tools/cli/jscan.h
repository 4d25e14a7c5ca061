/*
 * jscan.h - a streaming JSON tokenizer for the readers of mxprof traces.
 *
 * The input comes in pieces of any size (jscan_feed()); each value is
 * handed to a callback as soon as its last byte is seen, in the shape of
 * yajl's callback parser, so the readers keep one handler per kind of
 * token. A token that a piece cuts in two is left unconsumed: the caller
 * keeps the bytes from *used on and feeds them again, followed by more.
 * Strings come without their quotes, their escapes decoded (\uXXXX to
 * UTF-8, surrogate pairs joined, a lone surrogate as U+FFFD); bytes that
 * are not UTF-8 pass through unchanged. Numbers come as their text, in any
 * JSON form. Memory: the nesting stack (one byte per level, at most
 * JSCAN_DEPTH_MAX) and a scratch buffer as long as the longest string with
 * escapes.
 */
#ifndef MXPROF_JSCAN_H
#define MXPROF_JSCAN_H

#include <stddef.h>
#include <stdint.h>

/* Deeper nesting than this is refused as an error ("nested too deeply"). */
#define JSCAN_DEPTH_MAX (1 << 20)

/* One handler per token; each returns nonzero to go on, 0 to stop the
 * scan (jscan_feed() then returns JSCAN_STOPPED). Any may be NULL. String
 * and number text is valid only during the call. */
struct jscan_cb {
	int (*null)(void *ctx);
	int (*boolean)(void *ctx, int b);
	int (*number)(void *ctx, const char *s, size_t n);
	int (*string)(void *ctx, const unsigned char *s, size_t n);
	int (*start_map)(void *ctx);
	int (*map_key)(void *ctx, const unsigned char *s, size_t n);
	int (*end_map)(void *ctx);
	int (*start_array)(void *ctx);
	int (*end_array)(void *ctx);
	/* Offered each object that starts at p (its '{') in a value's place,
	 * before any other handler sees it; end is where the piece ends.
	 * Returns the object's length when the handler took it whole (no
	 * other handler is called for it, and the scan goes on after it),
	 * 0 to leave it to the scan, or -1 to stop the scan before it
	 * (JSCAN_STOPPED, *used at the '{'). */
	long (*object)(void *ctx, const unsigned char *p,
		       const unsigned char *end);
};

enum jscan_status {
	JSCAN_MORE = 0,	    /* every whole token was consumed; feed more */
	JSCAN_DONE = 1,	    /* the top-level value ended at *used */
	JSCAN_STOPPED = -1, /* a handler returned 0 */
	JSCAN_ERROR = -2,   /* not JSON: err and err_at tell where, why */
};

struct jscan {
	const struct jscan_cb *cb;
	void *ctx;
	int state;	      /* what may come next (jscan.c) */
	unsigned char *stack; /* 1: an object, 0: an array */
	size_t depth, stack_cap;
	unsigned char *str; /* decoded strings */
	size_t str_cap;
	unsigned long tokens; /* handlers called so far */
	const char *err;      /* why the text is not JSON, one phrase */
	uint64_t err_at;      /* where: the offset of the offending byte */
	uint64_t base;	      /* the offset of the next feed's first byte */
};

/* Prepares js to scan one JSON text, calling cb's handlers with ctx. This
 * function can't fail (memory is taken as the scan needs it). */
void jscan_init(struct jscan *js, const struct jscan_cb *cb, void *ctx);

/*
 * Scans p[0..len), the input from offset js->base on. Stores in *used how
 * many bytes were consumed: all but a token cut short at the end, which
 * must be fed again at the front of the next piece (js->base then
 * advances by *used). With last set, nothing more follows: a number at
 * the end is complete; a token still cut short is left (JSCAN_MORE, the
 * text ends early). Returns a jscan_status; after JSCAN_ERROR, js->err
 * and js->err_at say why and where (an out-of-memory error included).
 * Not to be called again after anything but JSCAN_MORE.
 */
enum jscan_status jscan_feed(struct jscan *js, const unsigned char *p,
			     size_t len, int last, size_t *used);

/* Returns the first byte from q on that ends the plain run of a string
 * (its closing quote, a backslash or a control character), or end. This
 * function can't fail. */
const unsigned char *jscan_plain_run(const unsigned char *q,
				     const unsigned char *end);

/* Returns the first byte from q on that is not printable ASCII other
 * than '"' and '\\' (bytes 0x20 to 0x7f stand for themselves in a string
 * and in its escaped copy), or end. This function can't fail. */
const unsigned char *jscan_ascii_run(const unsigned char *q,
				     const unsigned char *end);

/*
 * Scans the JSON number at tok, whose first byte is '-' or a digit.
 * Returns its length, 0 when end cuts it short (unless last: the end then
 * closes a number that is whole), or -1 with *err set to why and *bad at
 * the offending byte. This function can't fail otherwise.
 */
long jscan_number(const unsigned char *tok, const unsigned char *end, int last,
		  const char **err, const unsigned char **bad);

/* Returns 1 when the next token of js is a value of an array (at the
 * array's start or after a ','), else 0. This function can't fail. */
int jscan_array_value(const struct jscan *js);

/*
 * For a caller that took n values of the array js is in itself, from
 * where jscan_array_value() said one comes: moves js on to offset at of
 * the input, just after the last value taken when after_value is set (a
 * ',' or the array's close comes next), else where a value comes (after
 * the ',' before it; n may then be 0, at where js was). The next feed
 * starts at at. This function can't fail.
 */
void jscan_skip_values(struct jscan *js, uint64_t at, int after_value,
		       unsigned long n);

/* Frees what js holds. This function can't fail. */
void jscan_free(struct jscan *js);

#endif /* MXPROF_JSCAN_H */
