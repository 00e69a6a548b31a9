/*
 * hetrelax: the description of a structured-grid problem, the one input of every
 * structured method and placement (hr_grid_solver, hetrelax/grid_solver.h):
 *
 *     -div(a grad u) = f   on the box [0, L_x] x [0, L_y] (x [0, L_z]),
 *
 * on a grid of n[0] x n[1] (x n[2]) unknowns, with a boundary condition per face. Included
 * by hetrelax.h.
 *
 * The struct is plain data: hr_problem_init_model() fills it with today's model problem, the
 * setters (or the fields) change it, hr_problem_validate() says in one line what is wrong.
 * Arrays are borrowed: they must stay valid and unchanged until the call that takes the
 * problem (hr_grid_solver_create) returns; what a solver keeps it copies.
 *
 * Grid and spacing. Axis a (x = 0, y = 1, z = 2) has n[a] unknowns, equally spaced by h_a.
 * A Dirichlet face is not an unknown: the points on it hold the face's values. A Neumann
 * face's points are unknowns (half a cell wide, the finite-volume form below). Along an axis
 * that is not periodic the unknowns are x_i = (i + d) h_a, i = 0 .. n[a] - 1, with d = 1 when
 * the low face is Dirichlet (0 when it is Neumann) and h_a = L_a / (n[a] - 1 + d_lo + d_hi)
 * (d_lo, d_hi: 1 for a Dirichlet face, 0 for Neumann): Dirichlet on both faces is the
 * model problem's h_a = L_a / (n[a] + 1), Neumann on both L_a / (n[a] - 1) (n[a] >= 2).
 * Along a periodic axis x_i = i h_a, i = 0 .. n[a] - 1, h_a = L_a / n[a] (point n[a] is
 * point 0; n[a] >= 3). hr_problem_spacing() gives h_a.
 *
 * The discrete system (hr_problem_rhs; hr_problem_matrix in hetrelax/sparse.h) is the
 * finite-volume form of the 5- or 7-point stencil, divided by the full cell's volume, so
 * that it is symmetric: the coupling of neighbours p and q = p +- e_b is
 * -a_pq W_b / h_b^2 with a_pq the harmonic mean 2 a_p a_q / (a_p + a_q) and W_b the
 * product over the other axes of the cell's width (1, or 1/2 on a Neumann face); the
 * diagonal is the sum of the couplings' magnitudes plus a_p W_b / h_b^2 for each Dirichlet
 * neighbour (whose value moves to b); b = W f (W the product of all widths) plus, per
 * Dirichlet neighbour, a_p W_b / h_b^2 times its value, and per Neumann face of p,
 * a_p W_b / h_b times its flux. On the model problem this is the usual
 * (2 d u_p - sum of neighbours) / h^2 = f. The error is O(h^2) for every boundary type.
 *
 * Singular problems: with no Dirichlet face (every face Neumann or periodic) A has the
 * constants as its null space. The solvers then remove from f the constant that makes
 * sum(b) = 0 (the size of that projection is reported: hr_result.rhs_projection), and
 * return the solution whose unknowns sum to zero.
 *
 * Arrays over the grid (right-hand side, initial guess, coefficient, and the solutions a
 * solver returns) hold the unknowns only, x fastest: point (i, j, k) of the unknowns,
 * 0-based, at index (k n[1] + j) n[0] + i.
 *
 * Face arrays hold one value per grid point on the face (the unknowns' positions projected
 * onto it; edges and corners are not part of any face), the face's first remaining axis
 * fastest: faces x- and x+ hold n[1] x n[2] values (y fastest), faces y- and y+ n[0] x n[2]
 * (x fastest), faces z- and z+ n[0] x n[1] (x fastest); hr_problem_face_points() counts
 * them. A Dirichlet face's values are u there; a Neumann face's are the outward normal
 * derivative du/dn (the flux leaving the box, divided by a).
 *
 * What runs: every structured method on the CPU and one GPU runs every problem (hr_grid_solver); the
 * model problem (Dirichlet on every face with one constant value, a = 1, one spacing on
 * every axis) keeps its own fastest kernels. What a placement cannot run is refused by
 * hr_grid_solver_create with a message naming the field.
 */
#include "hetrelax/hetrelax.h" /* outside the guard: hetrelax.h includes this file at its end */

#ifndef HETRELAX_PROBLEM_H
#define HETRELAX_PROBLEM_H

#ifdef __cplusplus
extern "C" {
#endif

/* The faces of the box, low then high face of each axis. */
typedef enum {
    HR_FACE_X_MINUS = 0, /* x = 0 */
    HR_FACE_X_PLUS,      /* x = L_x */
    HR_FACE_Y_MINUS,
    HR_FACE_Y_PLUS,
    HR_FACE_Z_MINUS, /* 3-D only */
    HR_FACE_Z_PLUS,
    HR_FACE_COUNT
} hr_face;

/* hr_problem_set_bc(): every face of the problem's dimension. */
#define HR_FACES_ALL (-1)

typedef enum {
    HR_BC_DIRICHLET = 0, /* u given on the face */
    HR_BC_NEUMANN,       /* du/dn given on the face (n the outward normal) */
    HR_BC_PERIODIC       /* the axis wraps around: both of its faces periodic */
} hr_bc_kind;

typedef struct hr_bc {
    hr_bc_kind kind;
    double value;         /* the Dirichlet value or Neumann flux where `values` is NULL */
    const double *values; /* one per point of the face (the layout above), or NULL */
} hr_bc;

typedef struct hr_problem {
    int dim;                     /* 2 or 3 */
    int n[3];                    /* unknowns along x, y, z (n[2]: 1, or 0, in 2-D) */
    double length[3];            /* L_x, L_y, L_z: the box (length[2] unused in 2-D) */
    hr_bc bc[HR_FACE_COUNT];     /* per face, in hr_face order (the z faces unused in 2-D) */
    double coef;                 /* a where coef_values is NULL (> 0) */
    const double *coef_values;   /* a at every unknown (> 0, the grid array layout), or NULL */
    hr_rhs rhs;                  /* spike, manufactured, zero, random, or an array (hetrelax.h) */
    const double *rhs_values;    /* f at every unknown for HR_RHS_ARRAY */
    unsigned long long rhs_seed; /* HR_RHS_RANDOM's seed (1 from hr_problem_init_model) */
    hr_init init;                /* the initial guess: zero, sine, or an array */
    const double *init_values;   /* for HR_INIT_ARRAY */
} hr_problem;

/* The right-hand sides on a general box (hetrelax.h's hr_rhs):
 *   HR_RHS_SPIKE         a point source: h^2 f = 1 at the centre unknown ((n + 1) / 2 per axis,
 *                        1-based), 0 elsewhere (h^2 as the 5- or 7-point stencil scales it)
 *   HR_RHS_MANUFACTURED  f = pi^2 (sum_a 1 / L_a^2) u* with u* = prod_a sin(pi x_a / L_a): u* is
 *                        the exact solution for a = 1 and Dirichlet 0 on every face
 *   HR_RHS_ZERO          f = 0: the boundary alone drives the solution
 *   HR_RHS_ARRAY         rhs_values
 *   HR_RHS_RANDOM        f uniform in [0, 1) from rhs_seed: at the unknown of whole-grid index
 *                        q = i + n_x (j + n_y k), f = (m(q XOR m(seed + G)) >> 11) 2^-53 in
 *                        64-bit unsigned arithmetic, G = 0x9E3779B97F4A7C15 and m the
 *                        splitmix64 finaliser (z ^= z >> 30, z *= 0xBF58476D1CE4E5B9,
 *                        z ^= z >> 27, z *= 0x94D049BB133111EB, z ^= z >> 31): each value
 *                        depends on (seed, q) alone, so a slab of ranks or threads makes its
 *                        own values, the same as one process. Not the model problem.
 * The initial guesses: HR_INIT_ZERO, HR_INIT_SINE (prod_a sin(pi i_a / (n[a] + 1)), the
 * smoothest mode), HR_INIT_ARRAY (init_values). */

/*! hr_problem_init_model() :
 *  Today's model problem on nx x ny (x nz) unknowns (dim 2: nz ignored): the unit box with
 *  one spacing on every axis, h = 1 / (max(nx, ny[, nz]) + 1), so L_a = (n[a] + 1) h (1 along
 *  the longest axis); Dirichlet 0 on every face, a = 1, the spike right-hand side, a zero
 *  initial guess. The z faces of a 2-D problem stay Dirichlet 0 (unused).
 *  @return HR_OK, or HR_ERR_INVALID_ARG (p NULL, dim or a size out of range; the reason in
 *  hr_last_error()). */
HR_API hr_status hr_problem_init_model(hr_problem *p, int dim, int nx, int ny, int nz);

/*! hr_problem_set_lengths() : the box's lengths (lz ignored in 2-D), each finite and > 0. */
HR_API hr_status hr_problem_set_lengths(hr_problem *p, double lx, double ly, double lz);

/*! hr_problem_set_bc() :
 *  Sets face `face` (an hr_face, or HR_FACES_ALL: every face of the problem's dimension) to
 *  `kind` with the constant `value`, or with `values` (one per point of the face, borrowed;
 *  not with HR_FACES_ALL). Periodic belongs to an axis: either of its faces sets both
 *  (value and values are ignored). A z face of a 2-D problem is refused. */
HR_API hr_status hr_problem_set_bc(hr_problem *p, int face, hr_bc_kind kind, double value,
                                   const double *values);

/*! hr_problem_set_coef() : a = value everywhere (values NULL), or a per unknown (borrowed). */
HR_API hr_status hr_problem_set_coef(hr_problem *p, double value, const double *values);

/*! hr_problem_set_rhs() : the right-hand side; `values` for HR_RHS_ARRAY only (borrowed). */
HR_API hr_status hr_problem_set_rhs(hr_problem *p, hr_rhs kind, const double *values);

/*! hr_problem_set_init() : the initial guess; `values` for HR_INIT_ARRAY only (borrowed). */
HR_API hr_status hr_problem_set_init(hr_problem *p, hr_init kind, const double *values);

/*! hr_problem_validate() :
 *  @return HR_OK, or HR_ERR_INVALID_ARG with "field: reason" in `why` (may be NULL) of size
 *  `why_size`: dim, sizes, lengths, kinds, a periodic axis with one periodic face, a face
 *  or coefficient value that is not finite (a coefficient <= 0), a missing array. It checks
 *  the description only; whether a solver runs it is hr_grid_solver_create's answer. */
HR_API hr_status hr_problem_validate(const hr_problem *p, char *why, size_t why_size);

/*! hr_problem_spacing() : h along `axis` (0, 1, 2; the rule above), NaN for a bad argument. */
HR_API double hr_problem_spacing(const hr_problem *p, int axis);

/*! hr_problem_unknowns() : n[0] n[1] (n[2]) (0 for NULL): the length of every grid array. */
HR_API size_t hr_problem_unknowns(const hr_problem *p);

/*! hr_problem_face_points() : the length of a values array of `face` (0 for a bad argument). */
HR_API size_t hr_problem_face_points(const hr_problem *p, hr_face face);

/*! hr_face_name() : "x-", "x+", "y-", "y+", "z-", "z+", or NULL. */
HR_API const char *hr_face_name(hr_face face);

/*! hr_bc_kind_name() : "dirichlet", "neumann", "periodic", or NULL. */
HR_API const char *hr_bc_kind_name(hr_bc_kind kind);

/*! hr_problem_is_model() :
 *  1 when p is the model problem (Dirichlet on every face with one constant value, a = 1,
 *  one spacing on every axis, a right-hand side other than HR_RHS_RANDOM): the problems the
 *  model kernels (HR_PROBLEM_MODEL) run. */
HR_API int hr_problem_is_model(const hr_problem *p);

/*! hr_problem_is_singular() : 1 when no face is Dirichlet (A's null space is the constants). */
HR_API int hr_problem_is_singular(const hr_problem *p);

/* What hr_problem_rhs() did to b. */
typedef struct hr_system_info {
    int singular;          /* no Dirichlet face: b was projected onto A's range */
    double rhs_shift;      /* singular: the constant subtracted from f (0 otherwise) */
    double rhs_projection; /* singular: ||b - b_projected|| / ||b|| (0 otherwise; ||b - b_proj||
                              when b = 0) */
} hr_system_info;

/*! hr_problem_rhs() :
 *  b of the discrete system (above): `count` >= hr_problem_unknowns() values, the grid array
 *  layout, with f (the problem's right-hand side, or `f` when not NULL: f at every unknown)
 *  and the boundary conditions' contributions; projected when the problem is singular
 *  (`info`, may be NULL, says by how much).
 *  @return HR_OK, HR_ERR_INVALID_ARG (an invalid problem: the reason in hr_last_error()). */
HR_API hr_status hr_problem_rhs(const hr_problem *p, const double *f, double *b, size_t count,
                                hr_system_info *info);

#ifdef __cplusplus
}
#endif
#endif /* HETRELAX_PROBLEM_H */
