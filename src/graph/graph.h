/*
 * graph.h - the graph IR: tensors with element types and shapes, operators
 * with explicit inputs, a builder, a verifier, and a text form that prints
 * and parses back to the same graph.
 *
 * A Graph holds tensors (Graph.tensors, indexed by id) and operators
 * (Graph.ops) in definition order: every operator's inputs are defined
 * before it, so the op list is a topological order. Inputs and weights are
 * declared, every other tensor is the output of exactly one op (SSA).
 * The operator set is the table in ops.def; element types are the
 * DTYPES table of target/dtype.h. docs/graph.md describes the IR, the text form
 * and how to add an operator.
 *
 * Errors are user errors: builders return a tensor id or -1, other
 * functions 0 or a negative IPU_E*, and each fills a caller-owned Diag
 * (NULL allowed). The graph owns its tensors, ops and names; the caller
 * owns the Graph and frees it with graph_free.
 */
#ifndef IPU_GRAPH_H
#define IPU_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../target/dtype.h"
#include "../util/util.h"

enum {
	GRAPH_MAX_RANK = 6,
	GRAPH_MAX_INPUTS = 3,
	GRAPH_MAX_NAME = 63,      /* bytes of a tensor name */
	GRAPH_MAX_ERRORS = 8,     /* errors graph_parse reports */
	GRAPH_F8_SCALE_MIN = -32, /* the 6-bit scale field (fp.h) */
	GRAPH_F8_SCALE_MAX = 31,
	/* An int attribute's bound (concat's axis, gather's base): 2^24,
	 * below which f32 holds every integer */
	GRAPH_MAX_INT_ATTR = 1 << 24,
};
/* Largest element count of one tensor (2^40): keeps products of dims and
 * cost counts far from int64 overflow. */
#define GRAPH_MAX_ELEMS ((int64_t)1 << 40)

/* Masks of dtypes for the ops.def dtypes column. */
enum {
	DTM_ANY = (1 << DT_COUNT) - 1,
	DTM_WIDE = (1 << DT_F32) | (1 << DT_F16), /* f8 must be cast first */
};

/* An element type: a dtype and, for f8 only, the power-of-two scale (a
 * stored value q means decode(q) * 2^scale, as in fp.h). */
typedef struct {
	DType dtype;
	int scale; /* GRAPH_F8_SCALE_MIN..MAX for f8; 0 otherwise */
} ElemType;

/* A shape, also used for axis lists (a permutation). */
typedef struct {
	int rank;                    /* 0..GRAPH_MAX_RANK */
	int64_t dim[GRAPH_MAX_RANK]; /* each >= 1; unused entries 0 */
} Shape;

typedef enum {
	ROLE_INPUT,        /* fed by the host at each run */
	ROLE_WEIGHT,       /* constant over runs (weights, constants) */
	ROLE_INTERMEDIATE, /* written by one op, not returned */
	ROLE_OUTPUT,       /* written by one op and returned to the host */
} TensorRole;

typedef struct {
	int32_t id;       /* index in Graph.tensors */
	char *name;       /* unique in the graph; owned by the graph */
	ElemType elem;    /* element type */
	Shape shape;      /* rank >= 1 */
	TensorRole role;  /* see TensorRole */
	int32_t producer; /* index in Graph.ops of its op; -1 for inputs and
	                     weights */
} Tensor;

/* Attribute kinds and ids (ops.def ATTR rows). */
typedef enum { AK_FLAG, AK_ELEM, AK_DIMS, AK_FLOAT, AK_INT } AttrKind;

typedef enum {
#define ATTR(id, name, kind, field, positional) ATTR_##id,
#include "ops.def"
	ATTR_COUNT
} AttrId;

enum {
#define ATTR(id, name, kind, field, positional) A_##id = 1 << ATTR_##id,
#include "ops.def"
};

/* Every attribute of every op; an op uses those in its ops.def row and
 * leaves the rest zero. */
typedef struct {
	int transpose_a; /* matmul: 0/1, use a's last two axes swapped */
	int transpose_b; /* matmul: 0/1, likewise for b */
	ElemType to;     /* cast: the target element type */
	Shape shape;     /* reshape: the new shape */
	Shape perm;      /* transpose: output axis i = input axis perm.dim[i] */
	Shape begin;     /* slice: output axis i is input axis i's elements */
	Shape end;       /* begin.dim[i] .. end.dim[i] - 1 */
	double eps;      /* layernorm: added to the variance, finite, >= 0 */
	double scale;    /* softmax: multiplies x, finite, > 0 */
	int axis;        /* concat: the axis joined, 0 .. rank - 1 */
	int base;        /* gather: the id of the table's row 0 */
} OpAttrs;

typedef enum {
#define OP(id, name, nin, attrs, infer, work, dtypes, flags, doc) OP_##id,
#include "ops.def"
	OP_COUNT
} OpKind;

typedef struct {
	OpKind kind;
	int32_t in[GRAPH_MAX_INPUTS]; /* tensor ids; the first nin used, the
	                                 rest -1 */
	int32_t out;                  /* the tensor it defines */
	OpAttrs attr;                 /* see OpAttrs */
} Op;

/* Flags column of ops.def. */
enum {
	OPF_ELEMENTWISE = 1 << 0, /* inputs share a dtype; broadcasting */
	OPF_COMMUTES = 1 << 1,    /* inputs may be swapped */
	OPF_LAYOUT = 1 << 2,      /* moves data, no arithmetic */
	OPF_TRANSPOSE = 1 << 3,   /* takes transpose_a / transpose_b */
};

/* Useful arithmetic of one op: multiply-accumulates and other operations
 * (an add, a multiply, ...). FLOPs = 2 * macs + ops. */
typedef struct {
	int64_t macs;
	int64_t ops;
} OpWork;

/* One ops.def row. infer fills out->elem and out->shape. */
typedef struct {
	const char *name;
	int nin;
	unsigned attrs; /* A_* mask */
	int (*infer)(const Tensor *const in[], const OpAttrs *a, Tensor *out,
	             Diag *d);
	OpWork (*work)(const Tensor *const in[], const OpAttrs *a,
	               const Tensor *out);
	unsigned dtypes; /* DTM_* mask */
	unsigned flags;  /* OPF_* */
	const char *doc;
} OpDesc;

/* One ops.def ATTR row. */
typedef struct {
	const char *name;
	AttrKind kind;
	int positional;
} AttrDesc;

/* A promise about the op list that the compiler may use to run a loop
 * instead of unrolled ops (docs/graph.md "Repeat"): ops [first, first +
 * count len) are `count` iterations of the body, ops [first, first + len):
 * the same ops with the same attributes and types, each iteration on
 * weights of its own (or shared ones), each reading what the iteration
 * before made in place of one tensor made before the loop (the carry).
 * After the loop only the last iteration's carry is read. count 0: none.
 * With `groups` G > 1, iteration i is layer i / G of group i % G: the G
 * iterations of a layer read the same weights, and iteration i carries
 * on from iteration i - G (the first G from G tensors made before the
 * loop; after it the last G carries are read). groups 0 or 1: one group.
 * The meaning of the graph is that of its ops; the promise adds none. */
typedef struct {
	int32_t first, len, count, groups;
} GraphRepeat;

typedef struct Graph {
	Tensor *tensors; /* by id */
	int ntensors;
	Op *ops; /* in definition (topological) order */
	int nops;
	GraphRepeat repeat;
	/* private: growth and the name index */
	int cap_tensors, cap_ops;
	int32_t *index; /* open addressing: tensor id + 1, 0 = empty */
	int index_cap;  /* power of two */
} Graph;

/* graph.c */
int64_t shape_elems(const Shape *s);
/* "[4, 7]" into buf. */
void shape_format(const Shape *s, char *buf, size_t len);
/* "f16", "f8_f143*2^-3" into buf. */
void elem_format(ElemType e, char *buf, size_t len);
int elem_equal(ElemType a, ElemType b);
int shape_equal(const Shape *a, const Shape *b);
/* The matrices a shape stacks: the product of the axes before the last
 * two (1 for rank 1 and 2). */
int64_t shape_batches(const Shape *s);
/* A tensor's 2-D view: the last axis (cols) by all the others (rows). */
uint32_t tensor_view_rows(const Tensor *t);
uint32_t tensor_view_cols(const Tensor *t);

Graph *graph_new(void);
void graph_free(Graph *g);
/* The tensor with this id, or NULL. */
Tensor *graph_tensor(const Graph *g, int32_t id);
/* The id of the tensor named `name`, or -1. */
int32_t graph_find(const Graph *g, const char *name);

/* Builders. `name` may be NULL: the tensor is then called "t<id>" (with a
 * suffix if that is taken). Each returns the new tensor's id, or -1 with
 * the Diag filled and the graph unchanged. */
int32_t graph_input(Graph *g, const char *name, ElemType e, const Shape *s,
                    Diag *d);
int32_t graph_weight(Graph *g, const char *name, ElemType e, const Shape *s,
                     Diag *d);
enum { GRAPH_TRANSPOSE_A = 1, GRAPH_TRANSPOSE_B = 2 };
int32_t graph_matmul(Graph *g, int32_t a, int32_t b, unsigned flags,
                     const char *name, Diag *d);
int32_t graph_add(Graph *g, int32_t a, int32_t b, const char *name, Diag *d);
int32_t graph_mul(Graph *g, int32_t a, int32_t b, const char *name, Diag *d);
int32_t graph_cast(Graph *g, int32_t x, ElemType to, const char *name, Diag *d);
int32_t graph_reshape(Graph *g, int32_t x, const Shape *s, const char *name,
                      Diag *d);
int32_t graph_transpose(Graph *g, int32_t x, const Shape *perm,
                        const char *name, Diag *d);
/* Any op: in[] holds op_desc(kind)->nin ids; a may be NULL (all zero). */
int32_t graph_op(Graph *g, OpKind kind, const int32_t *in, const OpAttrs *a,
                 const char *name, Diag *d);
/* Mark an op's output as a graph output (role ROLE_OUTPUT). Inputs and
 * weights cannot be outputs. Marking twice is allowed. */
int graph_mark_output(Graph *g, int32_t id, Diag *d);

/* shape.c */
const OpDesc *op_desc(OpKind k);
const AttrDesc *attr_desc(AttrId a);
/* Rank 1..GRAPH_MAX_RANK, dims >= 1, at most GRAPH_MAX_ELEMS elements. */
int graph_check_shape(const Shape *s, Diag *d);
/* A known dtype; a scale only for f8, within the 6-bit field. */
int graph_check_elem(ElemType e, Diag *d);
/* The OpAttrs member that holds attribute id. */
void *attr_ptr(OpAttrs *a, AttrId id);
/* OP_COUNT if no op has this name. */
OpKind op_from_name(const char *s, size_t len);
/* Check op's inputs (ids, dtypes, attributes it does not take) and infer
 * its output element type and shape into out->elem and out->shape. */
int graph_infer(const Graph *g, const Op *op, Tensor *out, Diag *d);
/* Put "what: " in front of d->msg (d may be NULL); returns IPU_EINVAL. */
int graph_diag_prefix(Diag *d, const char *what);
/* Useful work of one op and FLOPs of the graph (2 per MAC, 1 per other
 * operation; casts and layout ops count 0). */
OpWork graph_op_work(const Graph *g, const Op *op);
int64_t graph_flops(const Graph *g);

/* text.c */
/* Parse the text form (docs/graph.md). On success *out is a new graph that
 * passes graph_verify. On failure *out is NULL, errs[0..*nerrs-1] hold up
 * to GRAPH_MAX_ERRORS errors in source order (errs must have room for
 * GRAPH_MAX_ERRORS; errs and nerrs may be NULL) and IPU_EINVAL is
 * returned. `name` is the file name used in messages. */
int graph_parse(const char *text, size_t len, const char *name, Graph **out,
                Diag *errs, int *nerrs);
/* Print the text form; parsing it gives back an identical graph. */
int graph_print(const Graph *g, FILE *f);
/* The text form in a malloc'd NUL-terminated string (caller frees). */
char *graph_print_str(const Graph *g);

/* repeat.c */
/* What a checked GraphRepeat means for each tensor. */
typedef struct {
	int32_t first, len, count; /* g->repeat */
	int32_t groups;            /* G >= 1; count / G layers */
	int32_t carry_in;   /* made before the loop, read by iteration 0 */
	int32_t carry_out;  /* iteration 0's tensor that iteration G reads in
	                       carry_in's place */
	int32_t last_out;   /* the last iteration's: what follows reads */
	int32_t *group_in;  /* [G]: what group g's first iteration reads as
	                       the carry (group_in[0]: carry_in) */
	int32_t *group_out; /* [G]: group g's last carry (group_out[G - 1]:
	                       last_out) */
	int nweights;       /* weights each layer has its own of */
	int32_t *weight;    /* [count / G][nweights]: layer k's weight j
	                       (weight[j]: layer 0's) */
} RepeatMap;
/* The iteration (0 .. count - 1) of repeat r that op o belongs to; -1
 * outside the loop or with no loop (count 0). */
int32_t graph_repeat_iteration(const GraphRepeat *r, int32_t o);
/* Check g->repeat (count 0: *m empty, IPU_OK) and describe it. The first
 * broken rule is reported, naming the op and iteration. Free with
 * repeat_map_free. */
int graph_repeat_map(const Graph *g, RepeatMap *m, Diag *d);
void repeat_map_free(RepeatMap *m);
/* Set g->repeat (count >= 2, groups >= 1) if graph_repeat_map accepts
 * it; on error the graph is unchanged. */
int graph_set_repeat(Graph *g, int32_t first, int32_t len, int32_t count,
                     int32_t groups, Diag *d);

/* verify.c */
/* Check every invariant (docs/graph.md "Invariants"); the first broken
 * one is reported. */
int graph_verify(const Graph *g, Diag *d);

#endif
