// Text that quotes input on its way to logs, terminals and the status file (corelib/text.hpp), and the
// C API's error messages that carry it (issue 14, defect 5: a binary topology.json put invalid
// UTF-8 into slurmctld.log and froze the status file).
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

#include "status.hpp"
#include "status_c.h"
#include "text.hpp"
#include "topoaware_c.h"
#include "cmocka_cxx.hpp"

using namespace topoaware;

namespace {

// Printable and valid UTF-8 (no control bytes).
bool clean(const std::string &s) { return printable_text(s) == s; }

void test_printable_text(void **) {
  assert_string_equal(printable_text("plain text: tp=8").c_str(), "plain text: tp=8");
  assert_string_equal(printable_text("a\tb\nc").c_str(), "a b c");
  assert_string_equal(printable_text(std::string("x\0y\x01\x7f", 5)).c_str(), "x?y??");
  assert_string_equal(printable_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80").c_str(),
                      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  assert_string_equal(printable_text("\xff\xfe").c_str(), "??");            // not UTF-8 at all
  assert_string_equal(printable_text("\xc3").c_str(), "?");                 // truncated
  assert_string_equal(printable_text("\xc0\xaf").c_str(), "??");            // overlong '/'
  assert_string_equal(printable_text("\xed\xa0\x80").c_str(), "???");       // a surrogate
  assert_string_equal(printable_text("\xf4\x90\x80\x80").c_str(), "????");  // above U+10FFFF
  assert_string_equal(printable_text("\xc2\x85").c_str(), "?");             // C1 control NEL
  std::string all;
  for (int c = 0; c < 256; ++c) all += char(c);
  assert_true(clean(printable_text(all)));
}

void test_utf8_prefix(void **) {
  const char *s = "ab\xe2\x82\xac";  // "ab€"
  assert_int_equal(utf8_prefix(s, 5), 5);
  assert_int_equal(utf8_prefix(s, 4), 2);  // inside the euro sign: cut before it
  assert_int_equal(utf8_prefix(s, 3), 2);
  assert_int_equal(utf8_prefix(s, 2), 2);
  assert_int_equal(utf8_prefix(s, 0), 0);
}

// A binary topology file: the error says so in printable text, cut to the buffer without
// splitting a character; the status file written with that error is valid JSON.
void test_binary_topology_message(void **) {
  char dir[] = "/tmp/ta-text-XXXXXX";
  assert_non_null(mkdtemp(dir));
  const std::string topo = std::string(dir) + "/topology.json";
  FILE *f = std::fopen(topo.c_str(), "wb");
  assert_non_null(f);
  const char junk[] = "{\"schema\": \"\xff\xfe\x01\x02\xe2\x82 caf\xc3\xa9\"}";
  std::fwrite(junk, 1, sizeof junk - 1, f);
  std::fclose(f);
  char err[TOPOAWARE_ERR_LEN];
  assert_null(topoaware_topo_load(topo.c_str(), err, sizeof err));
  assert_true(std::strlen(err) > 0);
  assert_true(clean(err));
  for (size_t len = 1; len < 40; ++len) {  // every cut is still clean text
    char small[40];
    assert_null(topoaware_topo_load(topo.c_str(), small, len));
    assert_true(clean(small));
  }
  // The status file takes a raw message too (a plugin may hand over any text) and stays writable.
  topoaware_status_t *st = topoaware_status_create("select/cons_tres_topoaware");
  topoaware_status_set_topology(st, topo.c_str(), "", "bytes \xff\xfe\x01 of a binary file");
  const std::string path = std::string(dir) + "/status.json";
  char *text = nullptr;
  size_t len = 0;
  assert_int_equal(topoaware_status_render(st, 10, 1, 1, &text, &len, err, sizeof err), 1);
  assert_int_equal(topoaware_status_write_text(path.c_str(), text, len, err, sizeof err), 0);
  topoaware_status_text_free(text);
  const Status s = load_status_file(path);
  assert_true(clean(s.topology_error));
  topoaware_status_free(st);
  unlink(path.c_str());
  unlink(topo.c_str());
  rmdir(dir);
}

}  // namespace

int main() {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_printable_text),
      cmocka_unit_test(test_utf8_prefix),
      cmocka_unit_test(test_binary_topology_message),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
