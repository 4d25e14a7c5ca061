/*
 * stacks.c - the stack table: call stacks by id, and what a dump needs of
 * them.
 *
 * A stack is a list of 64-bit frame words, innermost first, that only the
 * source that captured it can name (preload/stack.c: native return
 * addresses, and tagged words for Python frames). A record of kind
 * COLL_STACK ties stack id (its name) to the span of the same thread that
 * begins at its t0; it is pushed when the span begins, so it comes before
 * the span's own record and before those of the spans nested inside.
 *
 * Interning (HOT, any thread, a signal handler included): the words are
 * hashed and looked up in an open-addressing table whose entries are
 * claimed with a compare-and-swap and published with a release store once
 * their words are in the arena; no lock, no allocation after the first
 * call, whose one mmap is async-signal-safe. A thread that finds an entry
 * still being built goes on probing, so one stack may get two ids: both
 * name the same frames, and the dump's frame tree (stack_tree_build)
 * merges them.
 *
 * Naming (the drain thread, under the owner lock): the first time the drain
 * meets a stack it asks the namer for each word it has not seen, once,
 * while the frames' code is still loaded, and keeps the stack's call site:
 * the innermost frame in the user's own code, else the innermost frame.
 * A word the namer knows nothing of (an address in no loaded object: an
 * unwinder's misreading of a frame, or code unloaded since) is left out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "hmap.h"
#include "internal.h"

#define STACK_SLOTS    (1u << 16) /* ids 1 .. STACK_SLOTS - 1 */
#define STACK_WORDS    (1u << 22) /* frame words of every stack */
#define STACK_PEND_MAX 4096	  /* open spans with a stack, per thread */

/* The table of stacks is not a struct hmap (hmap.h): any thread, a
 * signal handler included, claims its slots by compare-and-swap, in one
 * mapping that never grows, and a stack's id is its slot. */
struct stack_ent {
	uint64_t hash;	/* 0: free; claimed by compare-and-swap */
	uint32_t off;	/* the words, in the arena             */
	uint16_t n;	/* how many                            */
	uint16_t ready; /* published: off and n are set         */
};

struct stack_mem {
	struct stack_ent ents[STACK_SLOTS];
	uint64_t words[STACK_WORDS];
};

static struct stack_mem *mem;
static uint32_t words_used;
static uint64_t stacks_lost;

/* ---- interning ------------------------------------------------------- */

static struct stack_mem *mem_get(void)
{
	struct stack_mem *m = __atomic_load_n(&mem, __ATOMIC_ACQUIRE);

	if (m) {
		return m;
	}
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		return NULL;
	}
	/* The first stacks land all over the entries: their pages in one
	 * system call rather than a page fault each (Linux 5.14 and later;
	 * elsewhere they fault in as used). */
	madvise(m->ents, sizeof(m->ents), MXPROF_MADV_POPULATE_WRITE);
	struct stack_mem *none = NULL;
	if (!__atomic_compare_exchange_n(&mem, &none, m, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		munmap(m, sizeof(*m));
		return none;
	}
	return m;
}

static uint64_t words_hash(const uint64_t *w, unsigned n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (unsigned i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h ? h : 1;
}

uint32_t stack_intern(const uint64_t *w, unsigned n)
{
	struct stack_mem *m;

	if (n == 0 || n > STACK_DEPTH_MAX || !(m = mem_get())) {
		return 0;
	}
	uint64_t h = words_hash(w, n);
	for (uint32_t k = 0, i = (uint32_t)h & (STACK_SLOTS - 1);
	     k < STACK_SLOTS; k++, i = (i + 1) & (STACK_SLOTS - 1)) {
		struct stack_ent *e = &m->ents[i];
		if (i == 0) {
			continue; /* id 0 is "no stack" */
		}
		uint64_t eh = __atomic_load_n(&e->hash, __ATOMIC_ACQUIRE);
		if (eh == h) {
			if (__atomic_load_n(&e->ready, __ATOMIC_ACQUIRE) &&
			    e->n == n &&
			    !memcmp(&m->words[e->off], w, n * sizeof(*w))) {
				return i;
			}
			continue;
		}
		if (eh != 0) {
			continue;
		}
		uint64_t zero = 0;
		if (!__atomic_compare_exchange_n(&e->hash, &zero, h, 0,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			if (zero == h) {
				k--; /* look at it again */
				i = (i - 1) & (STACK_SLOTS - 1);
			}
			continue;
		}
		uint32_t off =
			__atomic_fetch_add(&words_used, n, __ATOMIC_RELAXED);
		if (off + n > STACK_WORDS || off + n < off) {
			/* The arena is full: the entry stays claimed and
			 * never ready, so it matches nothing. */
			__atomic_fetch_add(&stacks_lost, 1, __ATOMIC_RELAXED);
			return 0;
		}
		memcpy(&m->words[off], w, n * sizeof(*w));
		e->off = off;
		e->n = (uint16_t)n;
		__atomic_store_n(&e->ready, 1, __ATOMIC_RELEASE);
		return i;
	}
	__atomic_fetch_add(&stacks_lost, 1, __ATOMIC_RELAXED);
	return 0;
}

const uint64_t *stack_words(uint32_t id, unsigned *n)
{
	struct stack_mem *m = __atomic_load_n(&mem, __ATOMIC_ACQUIRE);

	*n = 0;
	if (!m || id == 0 || id >= STACK_SLOTS ||
	    !__atomic_load_n(&m->ents[id].ready, __ATOMIC_ACQUIRE)) {
		return NULL;
	}
	*n = m->ents[id].n;
	return &m->words[m->ents[id].off];
}

uint64_t stack_lost(void)
{
	return __atomic_load_n(&stacks_lost, __ATOMIC_RELAXED);
}

/* ---- naming (the owner's) -------------------------------------------- */

/* What the namer said of one frame word. */
struct frame_name {
	uint64_t word;
	uint32_t name, cat; /* string ids */
	uint8_t user;
	uint8_t used; /* the slot holds a word */
	uint8_t none; /* the namer knew nothing of it: left out */
};

static stack_namer_fn namer;
static struct hmap fnames; /* struct frame_name, by word */
static uint32_t *sites;	   /* stack id -> call site's name id, 0: not yet */

void stack_set_namer(stack_namer_fn fn)
{
	namer = fn;
}

static uint64_t word_hash(uint64_t w)
{
	return (w * 0x9e3779b97f4a7c15ull) >> 32;
}

static int fname_empty(const void *slot)
{
	return !((const struct frame_name *)slot)->used;
}

static uint64_t fname_hash(const void *slot, const void *ctx)
{
	(void)ctx;
	return word_hash(((const struct frame_name *)slot)->word);
}

static int fname_match(const void *slot, const void *w)
{
	return ((const struct frame_name *)slot)->word == *(const uint64_t *)w;
}

static const struct hmap_ops fname_ops = {
	.size = sizeof(struct frame_name),
	.empty = fname_empty,
	.hash = fname_hash,
};

/* The name of frame word w, asking the namer the first time. NULL without
 * memory. */
static const struct frame_name *frame_name(uint64_t w)
{
	if (hmap_reserve(&fnames, &fname_ops, 4096, 1, 2, NULL) < 0) {
		return NULL;
	}
	struct frame_name *f =
		hmap_find(&fnames, &fname_ops, word_hash(w), fname_match, &w);
	if (f->used) {
		return f;
	}
	char name[512], cat[256];
	int user = 0;
	name[0] = cat[0] = 0;
	int none = !namer ||
		   namer(w, name, sizeof(name), cat, sizeof(cat), &user) < 0;
	f->none = (uint8_t)none;
	f->word = w;
	f->name = strtab_intern(name);
	f->cat = strtab_intern(cat);
	f->user = user != 0;
	f->used = 1;
	fnames.used++;
	return f;
}

uint32_t stack_site(uint32_t id)
{
	unsigned n;
	const uint64_t *w = stack_words(id, &n);

	if (!w) {
		return 0;
	}
	if (!sites && !(sites = calloc(STACK_SLOTS, sizeof(*sites)))) {
		return 0;
	}
	if (sites[id]) {
		return sites[id];
	}
	/* Every frame of the stack is named now, while its code is
	 * loaded: a dump later needs no namer. */
	uint32_t inner = 0, user = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct frame_name *f = frame_name(w[i]);
		if (!f) {
			return 0;
		}
		if (f->none) {
			continue;
		}
		if (!inner) {
			inner = f->name;
		}
		if (!user && f->user) {
			user = f->name;
		}
	}
	sites[id] = user ? user : inner;
	return sites[id];
}

/* ---- spans and their stacks, per thread ------------------------------- */

struct pend_ent {
	uint64_t t0;
	uint32_t id;
};

struct stack_pend {
	int tid;
	struct pend_ent *v;
	size_t n, cap;
};

struct stack_pends {
	struct stack_pend *t;
	size_t n, cap;
};

struct stack_pends *stack_pends_create(void)
{
	return calloc(1, sizeof(struct stack_pends));
}

void stack_pends_destroy(struct stack_pends *p)
{
	if (!p) {
		return;
	}
	for (size_t i = 0; i < p->n; i++) {
		free(p->t[i].v);
	}
	free(p->t);
	free(p);
}

static struct stack_pend *pend_of(struct stack_pends *p, int tid)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->t[i].tid == tid) {
			return &p->t[i];
		}
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct stack_pend *t = realloc(p->t, cap * sizeof(*t));
		if (!t) {
			return NULL;
		}
		p->t = t;
		p->cap = cap;
	}
	struct stack_pend *s = &p->t[p->n++];
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	return s;
}

uint32_t stack_pends_rec(struct stack_pends *p, int tid,
			 const struct coll_rec *r)
{
	struct stack_pend *s;

	if (!p || (r->kind != COLL_STACK && r->kind != COLL_SPAN &&
		   r->kind != COLL_FRAME)) {
		return 0;
	}
	if (!(s = pend_of(p, tid))) {
		return 0;
	}
	if (r->kind == COLL_STACK) {
		if (s->n == STACK_PEND_MAX) {
			/* Spans that never ended (their records were
			 * dropped): forget the older half. */
			memmove(s->v, s->v + s->n / 2,
				(s->n - s->n / 2) * sizeof(*s->v));
			s->n -= s->n / 2;
		}
		if (s->n == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 16;
			struct pend_ent *v = realloc(s->v, cap * sizeof(*v));
			if (!v) {
				return 0;
			}
			s->v = v;
			s->cap = cap;
		}
		s->v[s->n++] = (struct pend_ent){r->t0, r->name};
		return 0;
	}
	/* Spans end innermost first: stacks of spans that began after this
	 * one and never came are stale. */
	while (s->n > 0 && s->v[s->n - 1].t0 > r->t0) {
		s->n--;
	}
	if (s->n > 0 && s->v[s->n - 1].t0 == r->t0) {
		return s->v[--s->n].id;
	}
	return 0;
}

/* ---- the trace's frame tree ------------------------------------------- */

/* A node: a frame (name, category) under its caller's node. */
struct node {
	uint32_t parent, name, cat;
	uint8_t user;
};

struct stack_tree {
	struct node *nodes; /* node id - 1 */
	uint32_t nnodes, cap_nodes;
	struct hmap slots; /* node ids (0: empty) by (parent, frame) */
	uint32_t *leaf;	   /* stack id -> its innermost node */
};

static uint64_t node_hash(uint32_t parent, uint32_t name, uint32_t cat)
{
	uint64_t h = ((uint64_t)parent << 32 | name) * 0x9e3779b97f4a7c15ull;

	return (h ^ cat) * 0xff51afd7ed558ccdull;
}

static int slot_empty(const void *slot)
{
	return *(const uint32_t *)slot == 0;
}

/* ctx: the tree. */
static uint64_t slot_hash(const void *slot, const void *ctx)
{
	const struct stack_tree *t = ctx;
	const struct node *nd = &t->nodes[*(const uint32_t *)slot - 1];

	return node_hash(nd->parent, nd->name, nd->cat) >> 32;
}

static const struct hmap_ops slot_ops = {
	.size = sizeof(uint32_t),
	.empty = slot_empty,
	.hash = slot_hash,
};

/* What a lookup in a tree's slots looks for. */
struct node_key {
	const struct stack_tree *t;
	uint32_t parent, name, cat;
};

static int slot_match(const void *slot, const void *key)
{
	const struct node_key *k = key;
	const struct node *nd = &k->t->nodes[*(const uint32_t *)slot - 1];

	return nd->parent == k->parent && nd->name == k->name &&
	       nd->cat == k->cat;
}

/* The node of frame f under parent, added when new. 0 without memory. */
static uint32_t tree_node(struct stack_tree *t, uint32_t parent,
			  const struct frame_name *f)
{
	if (hmap_reserve(&t->slots, &slot_ops, 4096, 1, 2, t) < 0) {
		return 0;
	}
	struct node_key k = {t, parent, f->name, f->cat};
	uint32_t *slot = hmap_find(&t->slots, &slot_ops,
				   node_hash(parent, f->name, f->cat) >> 32,
				   slot_match, &k);
	uint32_t known = *slot;
	if (known != 0) {
		return known;
	}
	if (t->nnodes == t->cap_nodes) {
		uint32_t cap = t->cap_nodes ? t->cap_nodes * 2 : 1024;
		struct node *v = realloc(t->nodes, cap * sizeof(*v));
		if (!v) {
			return 0;
		}
		t->nodes = v;
		t->cap_nodes = cap;
	}
	uint32_t id = ++t->nnodes;
	t->nodes[id - 1] = (struct node){parent, f->name, f->cat, f->user};
	*slot = id;
	t->slots.used++;
	return id;
}

void stack_frames_write(struct out *o, const struct stack_tree *t)
{
	out_str(o, "\"stackFrames\":{");
	for (uint32_t id = 1; id <= t->nnodes; id++) {
		const struct node *nd = &t->nodes[id - 1];
		out_str(o, id == 1 ? "\n\"" : ",\n\"");
		out_u64(o, id);
		out_str(o, "\":{\"name\":");
		out_json_str(o, strtab_get(nd->name));
		out_str(o, ",\"category\":");
		out_json_str(o, strtab_get(nd->cat));
		if (nd->parent) {
			out_str(o, ",\"parent\":\"");
			out_u64(o, nd->parent);
			out_str(o, "\"");
		}
		if (nd->user) {
			out_str(o, ",\"user\":1");
		}
		out_str(o, "}");
	}
	out_str(o, t->nnodes ? "\n}" : "}");
}

/* Where the tree starts stack w[0..n) (innermost first): at its outermost
 * Python frame (category py) when it has one, else at its outermost
 * frame. The native frames outside a thread's first Python frame (the
 * interpreter's start, __libc_start_main) are there only when the
 * unwinder reached the native base before its depth ran out: left in,
 * the same <module> would root two trees in a flame graph. Returns the
 * index one past the first frame to keep. */
static unsigned tree_top(const uint64_t *w, unsigned n, uint32_t py)
{
	for (unsigned i = n; py && i-- > 0;) {
		const struct frame_name *f = frame_name(w[i]);
		if (f && !f->none && f->cat == py) {
			return i + 1;
		}
	}
	return n;
}

struct stack_tree *stack_tree_build(void)
{
	/* The category the namer gives Python frames (preload/stack_name.c). */
	uint32_t py = strtab_intern("python");
	struct stack_mem *m = __atomic_load_n(&mem, __ATOMIC_ACQUIRE);
	struct stack_tree *t;

	if (!m || !(t = calloc(1, sizeof(*t)))) {
		return NULL;
	}
	if (!(t->leaf = calloc(STACK_SLOTS, sizeof(*t->leaf)))) {
		free(t);
		return NULL;
	}
	for (uint32_t id = 1; id < STACK_SLOTS; id++) {
		unsigned n;
		const uint64_t *w;
		/* Every stack: those the drain met are named already,
		 * those a source keeps itself (CUDA calls) are named now. */
		if (!(w = stack_words(id, &n)) || !stack_site(id)) {
			continue;
		}
		uint32_t parent = 0;
		for (unsigned i = tree_top(w, n, py); i-- > 0;) {
			const struct frame_name *f = frame_name(w[i]);
			if (f && f->none) {
				continue;
			}
			if (!f || !(parent = tree_node(t, parent, f))) {
				break;
			}
		}
		t->leaf[id] = parent;
	}
	return t;
}

int stack_tree_node(const struct stack_tree *t, uint32_t id, uint32_t *parent,
		    uint32_t *name, uint32_t *cat)
{
	if (!t || id == 0 || id > t->nnodes) {
		return 0;
	}
	*parent = t->nodes[id - 1].parent;
	*name = t->nodes[id - 1].name;
	*cat = t->nodes[id - 1].cat;
	return 1;
}

uint32_t stack_tree_leaf(const struct stack_tree *t, uint32_t id)
{
	return t && id < STACK_SLOTS ? t->leaf[id] : 0;
}

uint32_t coll_trace_sf(const struct coll_trace *t, uint32_t id)
{
	return stack_tree_leaf(t->stacks, id);
}

uint32_t coll_stack_site(uint32_t id)
{
	return stack_site(id);
}

void stack_tree_free(struct stack_tree *t)
{
	if (!t) {
		return;
	}
	free(t->nodes);
	hmap_free(&t->slots);
	free(t->leaf);
	free(t);
}

/* ---- the tables' call-site rows --------------------------------------- */

/* (section, row, site) -> the "Call Sites: <section>" section and the
 * "<row> @ <site>" row, interned once. */
struct site_row {
	uint32_t group, name, site;
	uint32_t sgroup, sname;
};

static struct hmap srows; /* struct site_row, sname 0: empty */

static uint64_t srow_key_hash(uint32_t group, uint32_t name, uint32_t site)
{
	uint64_t h = ((uint64_t)group << 32 | name) * 0x9e3779b97f4a7c15ull;

	h = (h ^ site) * 0xff51afd7ed558ccdull;
	return h >> 32;
}

static int srow_empty(const void *slot)
{
	return ((const struct site_row *)slot)->sname == 0;
}

static uint64_t srow_hash(const void *slot, const void *ctx)
{
	const struct site_row *e = slot;

	(void)ctx;
	return srow_key_hash(e->group, e->name, e->site);
}

/* key: a struct site_row with group, name and site set. */
static int srow_match(const void *slot, const void *key)
{
	const struct site_row *e = slot, *k = key;

	return e->group == k->group && e->name == k->name && e->site == k->site;
}

static const struct hmap_ops srow_ops = {
	.size = sizeof(struct site_row),
	.empty = srow_empty,
	.hash = srow_hash,
};

int stack_site_row(uint32_t group, uint32_t name, uint32_t site,
		   uint32_t *sgroup, uint32_t *sname)
{
	if (hmap_reserve(&srows, &srow_ops, 1024, 1, 2, NULL) < 0) {
		return -ENOMEM;
	}
	struct site_row k = {group, name, site, 0, 0};
	struct site_row *e =
		hmap_find(&srows, &srow_ops, srow_key_hash(group, name, site),
			  srow_match, &k);
	if (e->sname) {
		*sgroup = e->sgroup;
		*sname = e->sname;
		return 0;
	}
	const char *g = strtab_get(group), *n = strtab_get(name),
		   *s = strtab_get(site);
	size_t len = strlen(g) + strlen(n) + strlen(s) + 16;
	char *buf = malloc(len);
	if (!buf) {
		return -ENOMEM;
	}
	snprintf(buf, len, "Call Sites: %s", g);
	uint32_t sg = strtab_intern(buf);
	snprintf(buf, len, "%s @ %s", n, s);
	uint32_t sn = strtab_intern(buf);
	free(buf);
	if (!sg || !sn) {
		return -ENOMEM;
	}
	*e = (struct site_row){group, name, site, sg, sn};
	srows.used++;
	*sgroup = sg;
	*sname = sn;
	return 0;
}
