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
 * Grid and spacing. Axis a (x = 0, y = 1, z = 2) has n[a] unknowns. Along an axis that is
 * not periodic they are the points x_i = i h_a, i = 1 .. n[a], with h_a = L_a / (n[a] + 1):
 * the points i = 0 and i = n[a] + 1 lie on the two faces. Along a periodic axis the unknowns
 * are x_i = i h_a, i = 0 .. n[a] - 1, with h_a = L_a / n[a] (point n[a] is point 0).
 * hr_problem_spacing() gives h_a.
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
 * What runs: hr_grid_solver_create refuses, with a message naming the field, what no
 * solver handles yet. So far every solver runs the model problem only: Dirichlet on every
 * face with one constant value, a = 1, and one spacing on every axis.
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
    int dim;                   /* 2 or 3 */
    int n[3];                  /* unknowns along x, y, z (n[2]: 1, or 0, in 2-D) */
    double length[3];          /* L_x, L_y, L_z: the box (length[2] unused in 2-D) */
    hr_bc bc[HR_FACE_COUNT];   /* per face, in hr_face order (the z faces unused in 2-D) */
    double coef;               /* a where coef_values is NULL (> 0) */
    const double *coef_values; /* a at every unknown (> 0, the grid array layout), or NULL */
    hr_rhs rhs;                /* spike, manufactured, zero, or an array (hetrelax.h) */
    const double *rhs_values;  /* f at every unknown for HR_RHS_ARRAY */
    hr_init init;              /* the initial guess: zero, sine, or an array */
    const double *init_values; /* for HR_INIT_ARRAY */
} hr_problem;

/* The right-hand sides on a general box (hetrelax.h's hr_rhs):
 *   HR_RHS_SPIKE         a point source: h^2 f = 1 at the centre unknown ((n + 1) / 2 per axis,
 *                        1-based), 0 elsewhere (h^2 as the 5- or 7-point stencil scales it)
 *   HR_RHS_MANUFACTURED  f = pi^2 (sum_a 1 / L_a^2) u* with u* = prod_a sin(pi x_a / L_a): u* is
 *                        the exact solution for a = 1 and Dirichlet 0 on every face
 *   HR_RHS_ZERO          f = 0: the boundary alone drives the solution
 *   HR_RHS_ARRAY         rhs_values
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
HR_API hr_status hr_problem_set_bc(hr_problem *p, int face, hr_bc_kind kind, double value, const double *values);

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

#ifdef __cplusplus
}
#endif
#endif /* HETRELAX_PROBLEM_H */
