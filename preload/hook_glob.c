/*
 * hook_glob.c - the shell globs of MXPROF_HOOK's patterns, matched byte by
 * byte.
 *
 * The patcher matches every relocation and every symbol of every loaded
 * object against the patterns: hundreds of thousands of matches while
 * PyTorch loads. glibc's fnmatch() takes a wide-character path in a
 * multibyte locale (C.UTF-8, which Python sets): it converts the pattern
 * and the name to wchar_t on every call, several times the cost of the
 * match itself. Symbol and library names are bytes, so a byte matcher
 * gives the same answers as fnmatch(pattern, name, 0) in the C locale,
 * with no locale, allocation or conversion.
 */
#include <ctype.h>
#include <string.h>

#include "hook.h"

/* Does byte c belong to the class named by n bytes at name ("alpha")? */
static int in_class(const char *name, size_t n, unsigned char c)
{
	static const struct {
		const char *name;
		int (*is)(int);
	} classes[] = {
		{"alnum", isalnum}, {"alpha", isalpha}, {"blank", isblank},
		{"cntrl", iscntrl}, {"digit", isdigit}, {"graph", isgraph},
		{"lower", islower}, {"print", isprint}, {"punct", ispunct},
		{"space", isspace}, {"upper", isupper}, {"xdigit", isxdigit},
	};

	/* An unknown name matches nothing (fnmatch: the whole pattern). */
	for (size_t k = 0; k < sizeof(classes) / sizeof(*classes); k++) {
		if (strlen(classes[k].name) == n &&
		    memcmp(classes[k].name, name, n) == 0) {
			/* The C locale's answer, whatever the program's. */
			return c < 128 && classes[k].is(c);
		}
	}
	return 0;
}

/*
 * Matches byte c against the bracket expression at p (just past '[').
 * Returns the pattern just past its closing ']' and sets *hit, or NULL
 * when the bracket has no ']' (then '[' is an ordinary byte, as in
 * fnmatch). A bracket fnmatch finds ill-formed (a backslash or a range
 * cut by the pattern's end) matches nothing: *hit is 0.
 */
static const char *bracket(const char *p, unsigned char c, int *hit)
{
	int neg = *p == '!' || *p == '^';
	int found = 0;

	*hit = 0;
	p += neg;
	for (int first = 1; first || *p != ']'; first = 0) {
		unsigned char lo;

		if (!*p) {
			return NULL;
		}
		if (p[0] == '[' && p[1] == ':') {
			/* A class name is lower-case letters up to ":]", as
			 * glibc reads it; anything else makes '[' a member. */
			const char *end = p + 2;
			while (*end >= 'a' && *end < 'z') {
				end++;
			}
			if (end[0] == ':' && end[1] == ']') {
				found |= in_class(p + 2, (size_t)(end - p - 2),
						  c);
				p = end + 2;
				continue;
			}
		}
		if (*p == '\\' && !*++p) {
			return p;
		}
		lo = (unsigned char)*p++;
		if (p[0] == '-' && p[1] != ']') {
			unsigned char hi;

			p++;
			if (*p == '\\') {
				p++;
			}
			if (!*p) {
				return p;
			}
			hi = (unsigned char)*p++;
			found |= lo <= c && c <= hi;
		} else {
			found |= c == lo;
		}
	}
	*hit = found != neg;
	return p + 1;
}

/*
 * Iterative, with one point to come back to: the last '*' seen and the
 * byte of s it was last tried against. When what follows a '*' fails,
 * the '*' takes one more byte; an earlier '*' never needs to, because the
 * later one can take whatever it would have.
 */
int hook_glob_match(const char *pat, const char *s)
{
	const char *star = NULL, *star_s = NULL;

	for (;;) {
		int hit = 0;
		const char *next = NULL;

		if (*pat == '*') {
			while (*pat == '*') {
				pat++;
			}
			if (!*pat) {
				return 1;
			}
			star = pat;
			star_s = s;
			continue;
		}
		if (!*s) {
			if (!*pat) {
				return 1;
			}
		} else if (*pat == '?') {
			next = pat + 1;
		} else if (*pat == '[') {
			next = bracket(pat + 1, (unsigned char)*s, &hit);
			if (!next) {
				next = *s == '[' ? pat + 1 : NULL;
			} else if (!hit) {
				next = NULL;
			}
		} else if (*pat == '\\') {
			/* A trailing backslash matches nothing (fnmatch). */
			next = pat[1] && pat[1] == *s ? pat + 2 : NULL;
		} else if (*pat && *pat == *s) {
			next = pat + 1;
		}
		if (next) {
			pat = next;
			s++;
			continue;
		}
		if (!star || !*star_s) {
			return 0;
		}
		pat = star;
		s = ++star_s;
	}
}
