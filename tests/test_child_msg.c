/*
 * test_child_msg.c - the child-to-parent progress lines (measure/internal.h hb_child_msg_parse), as
 * child.c writes them, on random instance and case numbers: every kind parsed with its fields, the
 * newline cut, a relative error optional on "E", and malformed lines or an instance index out of range
 * refused (kind 0), which both readers (runner.c, serve.c) ignore.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "measure/internal.h"

static void test_kinds(void **state)
{
    (void)state;
    srand(47);
    for (int it = 0; it < 2000; it++) {
        const int inst = rand() % MAX_INST, gn = 1 + rand() % 8;
        const size_t c = (size_t)rand() % 100000, n = (size_t)rand() % 5000;
        const double rel = (rand() % 1000) * 1e-6;
        char line[512];
        hb_child_msg m;
        snprintf(line, sizeof line, "B %d %zu\n", inst, c);
        assert_int_equal(hb_child_msg_parse(line, &m), 'B');
        assert_int_equal(m.inst, inst);
        assert_int_equal(m.c, c);
        snprintf(line, sizeof line, "S %d %zu\n", inst, c);
        assert_int_equal(hb_child_msg_parse(line, &m), 'S');
        assert_int_equal(m.c, c);
        snprintf(line, sizeof line, "G %d %zu %d\n", inst, c, gn);
        assert_int_equal(hb_child_msg_parse(line, &m), 'G');
        assert_int_equal(m.gn, gn);
        assert_int_equal(m.c, c);
        snprintf(line, sizeof line, "T %d %zu cpu:%d\n", inst, n, inst);
        assert_int_equal(hb_child_msg_parse(line, &m), 'T');
        assert_int_equal(m.n, n);
        char want[32];
        snprintf(want, sizeof want, "cpu:%d", inst);
        assert_string_equal(m.name, want);
        snprintf(line, sizeof line, "E %d %zu wrong %.3g\n", inst, c, rel);
        assert_int_equal(hb_child_msg_parse(line, &m), 'E');
        assert_string_equal(m.name, "wrong");
        assert_true(m.rel >= 0 && m.rel <= rel * 1.01 + 1e-12 && m.rel >= rel * 0.99 - 1e-12);
        snprintf(line, sizeof line, "E %d %zu ok\n", inst, c);
        assert_int_equal(hb_child_msg_parse(line, &m), 'E');
        assert_true(m.rel == -1);
        snprintf(line, sizeof line, "N %d opencl:0:%d: none of the requested cases: why %d\n", inst, inst, it);
        assert_int_equal(hb_child_msg_parse(line, &m), 'N');
        snprintf(want, sizeof want, "opencl:0:%d", inst);
        assert_string_equal(m.name, want);
        assert_null(strchr(m.text, '\n'));
        assert_non_null(strstr(m.text, ": none of the requested cases: why"));
        snprintf(line, sizeof line, "W %d\n", 1 + it % 120);
        assert_int_equal(hb_child_msg_parse(line, &m), 'W');
        assert_int_equal(m.err, 1 + it % 120);
        /* out of range, malformed */
        snprintf(line, sizeof line, "B %d %zu\n", MAX_INST + inst, c);
        assert_int_equal(hb_child_msg_parse(line, &m), 0);
        snprintf(line, sizeof line, "B -%d %zu\n", 1 + inst, c);
        assert_int_equal(hb_child_msg_parse(line, &m), 0);
        snprintf(line, sizeof line, "G %d x\n", inst);
        assert_int_equal(hb_child_msg_parse(line, &m), 0);
        snprintf(line, sizeof line, "Z %d\n", inst);
        assert_int_equal(hb_child_msg_parse(line, &m), 0);
    }
    char k[] = "K [{\"name\":\"copy_gbps\",\"value\":10}]\n", u[] = "U no driver here\n", p[] = "P\n";
    hb_child_msg m;
    assert_int_equal(hb_child_msg_parse(k, &m), 'K');
    assert_string_equal(m.text, "[{\"name\":\"copy_gbps\",\"value\":10}]");
    assert_int_equal(hb_child_msg_parse(u, &m), 'U');
    assert_string_equal(m.text, "no driver here");
    assert_int_equal(hb_child_msg_parse(p, &m), 'P');
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_kinds)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
