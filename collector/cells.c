/*
 * cells.c - the cells of the tables, in the layout of MXNet's profiler:
 * a growing string (sb_printf), quoted JSON and CSV strings, the header
 * lines of a section and a row's name cell. A leaf below table.c and
 * table_rows.c, which share them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "internal.h"
#include "output.h"

/* Appends to b as printf does. On allocation failure b->err is set and
 * later calls do nothing. */
void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;

	for (;;) {
		if (b->err) {
			return;
		}
		size_t room = b->cap - b->n;
		va_start(ap, fmt);
		int k = vsnprintf(b->p ? b->p + b->n : NULL, room, fmt, ap);
		va_end(ap);
		if (k < 0) {
			b->err = 1;
			return;
		}
		if ((size_t)k < room) {
			b->n += (size_t)k;
			return;
		}
		size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)k;
		char *np = realloc(b->p, cap);
		if (!np) {
			b->err = 1;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
}

/* Appends s as a quoted JSON string, whole: an escape takes at most six
 * bytes per byte of s. */
void cells_json_str(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);
	char *buf = malloc(n * 6 + 1);

	if (!buf) {
		b->err = 1;
		return;
	}
	buf[out_json_escape(buf, n * 6, s, n, NULL)] = 0;
	sb_printf(b, "\"%s\"", buf);
	free(buf);
}

/* Appends s as a quoted CSV field, quotes doubled. */
void cells_csv_str(struct sbuf *b, const char *s)
{
	sb_printf(b, "\"");
	for (; *s; s++) {
		sb_printf(b, *s == '"' ? "\"\"" : "%c", *s);
	}
	sb_printf(b, "\"");
}

/* ns as ms. */
double cells_ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* Writes the two header lines of a section, the column names and their
 * underlines, with a Name column w wide. */
void cells_header(struct sbuf *b, const char *const *cols, int ncols, int w)
{
	sb_printf(b, "%-*s%*s", w, "Name", CELLS_COUNT_W, "Total Count");
	for (int i = 0; i < ncols; i++) {
		sb_printf(b, "%*s", CELLS_COL_W, cols[i]);
	}
	sb_printf(b, "\n%-*s%*s", w, "----", CELLS_COUNT_W, "-----------");
	for (int i = 0; i < ncols; i++) {
		char dashes[CELLS_COL_W + 1];
		size_t len = strlen(cols[i]);
		memset(dashes, '-', len);
		dashes[len] = 0;
		sb_printf(b, "%*s", CELLS_COL_W, dashes);
	}
	sb_printf(b, "\n");
}

/* Writes a name cell w wide, and at least one space after. */
void cells_name(struct sbuf *b, const char *name, int w)
{
	size_t len = strlen(name);

	sb_printf(b, "%-*s%s", w, name, len >= (size_t)w ? " " : "");
}
