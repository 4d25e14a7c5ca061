/*
 * table_rows.c - the sections of the event sources, given as rows
 * (table_section(), table_row(), table_note(): source.h), written as they
 * come in the format of the output being made (table.c calls
 * table_rows_run() at the place of the sources' sections). Their Name
 * column stays 30 wide, and they have no Total row.
 */
#include <stdio.h>
#include <string.h>

#include "files.h"
#include "internal.h"

/* Ends the current section, if any. */
static void sink_end(struct table_sink *k)
{
	if (!k->s) {
		return;
	}
	if (k->o->format == TABLE_TEXT) {
		sb_printf(k->b, "\n");
	} else if (k->o->format == TABLE_JSON) {
		sb_printf(k->b, "\n        }");
	}
	k->s = NULL;
}

void table_section(struct table_sink *k, const struct table_section *s)
{
	static const char *const time_cols[] = {
		"Time (ms)", "Min Time (ms)", "Max Time (ms)", "Avg Time (ms)"};
	const char *cols[4 + TABLE_COLS_MAX];
	int n = 0;

	sink_end(k);
	k->s = s;
	k->rows = 0;
	if (k->o->format == TABLE_JSON) {
		sb_printf(k->b, "%s\n        ", k->first ? "" : ",");
		cells_json_str(k->b, s->title);
		sb_printf(k->b, ": {");
		k->first = 0;
	}
	if (k->o->format != TABLE_TEXT) {
		return;
	}
	if (s->total) {
		cols[n++] = s->total;
	} else {
		for (int i = 0; i < 4; i++) {
			cols[n++] = time_cols[i];
		}
	}
	for (int i = 0; i < s->ncols && i < TABLE_COLS_MAX; i++) {
		cols[n++] = s->cols[i].title;
	}
	sb_printf(k->b, "%s\n=================\n", s->title);
	cells_header(k->b, cols, n, CELLS_NAME_W);
}

static void sink_text_row(struct table_sink *k, const struct table_row *r)
{
	const struct table_section *s = k->s;

	cells_name(k->b, r->name, CELLS_NAME_W);
	sb_printf(k->b, "%*llu", CELLS_COUNT_W, (unsigned long long)r->count);
	if (s->total) {
		sb_printf(k->b, "%*.4f", CELLS_COL_W, cells_ms(r->total));
	} else {
		sb_printf(k->b, "%*.4f%*.4f%*.4f%*.4f", CELLS_COL_W,
			  cells_ms(r->total), CELLS_COL_W, cells_ms(r->min),
			  CELLS_COL_W, cells_ms(r->max), CELLS_COL_W,
			  cells_ms(r->total) / (double)r->count);
	}
	for (int i = 0; i < s->ncols && i < TABLE_COLS_MAX; i++) {
		sb_printf(k->b, "%*.*f", CELLS_COL_W, s->cols[i].decimals,
			  r->cols[i]);
	}
	sb_printf(k->b, "\n");
}

static void sink_json_row(struct table_sink *k, const struct table_row *r)
{
	const struct table_section *s = k->s;

	sb_printf(k->b, "%s\n            ", k->rows ? "," : "");
	cells_json_str(k->b, r->name);
	sb_printf(k->b, ": {\"Total Count\": %llu",
		  (unsigned long long)r->count);
	if (s->total) {
		sb_printf(k->b, ", ");
		cells_json_str(k->b, s->total_key);
		sb_printf(k->b, ": %.4f", cells_ms(r->total));
	} else {
		sb_printf(k->b,
			  ", \"Total Time\": %.4f, \"Min Time\": %.4f, "
			  "\"Max Time\": %.4f, \"Avg Time\": %.4f",
			  cells_ms(r->total), cells_ms(r->min),
			  cells_ms(r->max),
			  cells_ms(r->total) / (double)r->count);
	}
	for (int i = 0; i < s->ncols && i < TABLE_COLS_MAX; i++) {
		sb_printf(k->b, ", ");
		cells_json_str(k->b, s->cols[i].key);
		sb_printf(k->b, ": %.*f", s->cols[i].decimals, r->cols[i]);
	}
	sb_printf(k->b, "}");
}

/* A CSV row of kind time_ms: the total (and, with all four time columns,
 * min, max and avg) in ms, no self time, the percent column when the
 * section has one, no errors. */
static void sink_csv_row(struct table_sink *k, const struct table_row *r)
{
	const struct table_section *s = k->s;

	cells_csv_str(k->b, s->title);
	sb_printf(k->b, ",time_ms,");
	cells_csv_str(k->b, r->name);
	sb_printf(k->b, ",%llu", (unsigned long long)r->count);
	if (s->total) {
		sb_printf(k->b, ",%.6f,,,", cells_ms(r->total));
	} else {
		sb_printf(k->b, ",%.6f,%.6f,%.6f,%.6f", cells_ms(r->total),
			  cells_ms(r->min), cells_ms(r->max),
			  cells_ms(r->total) / (double)r->count);
	}
	sb_printf(k->b, ",,");
	for (int i = 0; i < s->ncols && i < TABLE_COLS_MAX; i++) {
		if (s->cols[i].percent) {
			sb_printf(k->b, "%.2f", r->cols[i]);
			break;
		}
	}
	sb_printf(k->b, ",\n");
}

void table_row(struct table_sink *k, const struct table_row *r)
{
	if (!k->s || (k->o->top && k->rows >= k->o->top)) {
		return;
	}
	if (k->o->format == TABLE_JSON) {
		sink_json_row(k, r);
	} else if (k->o->format == TABLE_CSV) {
		sink_csv_row(k, r);
	} else {
		sink_text_row(k, r);
	}
	k->rows++;
}

void table_note(struct table_sink *k, const char *label, uint64_t count)
{
	if (k->nnotes < 4) {
		k->notes[k->nnotes].label = label;
		k->notes[k->nnotes++].count = count;
	}
}

void table_rows_begin(struct table_sink *k, struct sbuf *b,
		      const struct table_opts *o, int first)
{
	memset(k, 0, sizeof(*k));
	k->b = b;
	k->o = o;
	k->first = first;
}

int table_rows_run(struct table_sink *k)
{
	if (k->o->extra && !k->o->category) {
		k->o->extra(k, k->o);
	}
	sink_end(k);
	return k->first;
}
