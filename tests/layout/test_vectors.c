/* Every golden vector (tests/vectors/layout_algebra.tsv and the nested-tiler corpus
 * tests/vectors/layout_nested_tilers.tsv, both computed with NVIDIA's pycute) through the
 * library by name, compared as strings; an expected 'error' must come back as a failed
 * status with a sentence. Also times the algebra file. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hg_test.h"
#include "hopgen/layout.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct vec {
  char *op, *a1, *a2, *expected;
  long line;
} vec_t;

static vec_t *vecs;
static int nvecs;
static char *text;

static void load(const char *rel) {
  free(vecs);
  free(text);
  vecs = NULL;
  text = NULL;
  nvecs = 0;
  char path[4096];
  hg_test_src_path(rel, path, sizeof path);
  FILE *f = fopen(path, "rb");
  if (!f) {
    HG_FAIL("cannot open %s", path);
    return;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = malloc((size_t)n + 1);
  size_t got = fread(text, 1, (size_t)n, f);
  fclose(f);
  text[got] = '\0';
  int cap = 8192;
  vecs = malloc(sizeof *vecs * (size_t)cap);
  long lineno = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    lineno++;
    if (line[0] == '#' || line[0] == '\0') continue;
    char *f4[4] = {0};
    int k = 0;
    for (char *p = line; k < 4; k++) {
      f4[k] = p;
      char *tab = strchr(p, '\t');
      if (!tab) {
        k++;
        break;
      }
      *tab = '\0';
      p = tab + 1;
    }
    if (k < 4 || !f4[3]) {
      HG_FAIL("line %ld: expected 4 tab-separated fields", lineno);
      continue;
    }
    if (nvecs == cap) break;
    vecs[nvecs++] = (vec_t){f4[0], f4[1], f4[2], f4[3], lineno};
  }
}

/* Runs every vector of the loaded file; returns how many expected an error. */
static int run_vectors(void) {
  char buf[8192];
  int errors_expected = 0;
  for (int i = 0; i < nvecs; i++) {
    const char *args[2] = {vecs[i].a1, vecs[i].a2};
    hg_status_t s = hg_layout_op(vecs[i].op, 2, args, buf, sizeof buf);
    const char *got = hg_is_ok(&s) ? buf : "error";
    hg_test_checks++;
    if (strcmp(got, vecs[i].expected) != 0)
      HG_FAIL("line %ld: %s %s %s: got %s (%s), expected %s", vecs[i].line, vecs[i].op, vecs[i].a1,
              vecs[i].a2, got, s.msg, vecs[i].expected);
    if (!hg_is_ok(&s)) {
      errors_expected++;
      CHECK(strlen(s.msg) > 20); /* a sentence, not a bare code */
    }
  }
  return errors_expected;
}

static void test_all_vectors(void) {
  load("tests/vectors/layout_algebra.tsv");
  CHECK_EQ(nvecs, 4000);
  double t0 = now_s();
  int errors_expected = run_vectors();
  double dt = now_s() - t0;
  fprintf(stderr, "%d vectors (%d expected errors) in %.2f ms\n", nvecs, errors_expected, dt * 1e3);
  CHECK(dt < 0.5); /* the brief: well under a second */
  CHECK(errors_expected > 0);
}

/* Nested by-mode tilers ([[2:1,3:1],4:1], [(2,2):(1,2),_], tuples of sizes) through
 * composition and the divides and products, against pycute on a random corpus. */
static void test_nested_tilers(void) {
  load("tests/vectors/layout_nested_tilers.tsv");
  CHECK_EQ(nvecs, 1400);
  int errors_expected = run_vectors();
  fprintf(stderr, "%d nested-tiler vectors (%d expected errors)\n", nvecs, errors_expected);
  CHECK(errors_expected > 0);
  CHECK(errors_expected < nvecs / 4);
}

int main(void) {
  HG_RUN(test_all_vectors);
  HG_RUN(test_nested_tilers);
  free(vecs);
  free(text);
  return hg_test_finish();
}
