// SPDX-License-Identifier: GPL-2.0-or-later
// Text that quotes input on its way to logs, terminals and the status file (corelib/text.hpp), and the
// C API's error messages that carry it (a binary topology.json must not put invalid
// UTF-8 into slurmctld.log or stop the status file from being written).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "ibnetdiscover_parser.hpp"
#include "outputs.hpp"
#include "show.hpp"
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

void test_trim(void **) {
  assert_true(trim("") == "");
  assert_true(trim("   ") == "");
  assert_true(trim(" \t\r\n\v\f") == "");
  assert_true(trim("  a b  ") == "a b");
  assert_true(trim("\ta\tb\r\n") == "a\tb");
  assert_true(trim("x") == "x");
  assert_true(trim("\xc3\xa9 ") == "\xc3\xa9");                                     // non-ASCII bytes are not blank
  assert_true(trim(std::string_view("\0a\0", 3)) == std::string_view("\0a\0", 3));  // nor is NUL
  assert_true(trim("..a..", ".") == "a");                                           // other blanks
  assert_true(trim(" a ", "") == " a ");
}

void test_split(void **) {
  using V = std::vector<std::string>;
  assert_true(split("", ',') == V{""});
  assert_true(split(",", ',') == V({"", ""}));
  assert_true(split("a,,b", ',') == V({"a", "", "b"}));
  assert_true(split(" a , b ", ',') == V({" a ", " b "}));  // not trimmed
  assert_true(split("a|b|c|d", '|', 2) == V({"a", "b|c|d"}));
  assert_true(split("a|b|c|d", '|', 3) == V({"a", "b", "c|d"}));
  assert_true(split("a|b", '|', 8) == V({"a", "b"}));
  assert_true(split("a|b", '|', 1) == V{"a|b"});
  assert_true(split("a\"b,\\c\n,\xff", ',') == V({"a\"b", "\\c\n", "\xff"}));  // bytes kept as they are
  assert_true(split_list("") == V{});
  assert_true(split_list(" , ,\t,") == V{});
  assert_true(split_list("mlx5_0, mlx5_1,,\tmlx5_2\r") == V({"mlx5_0", "mlx5_1", "mlx5_2"}));
  assert_true(split_list("a b;c", ';') == V({"a b", "c"}));
}

// Whatever a name holds, it stays inside its DOT string: every '"' is escaped (preceded by an
// odd number of backslashes), no raw newline or control byte, valid UTF-8.
bool one_dot_string(const std::string &e) {
  if (printable_text(e) != e) return false;
  size_t backslashes = 0;
  for (char c : e) {
    if (c == '"' && backslashes % 2 == 0) return false;
    backslashes = c == '\\' ? backslashes + 1 : 0;
  }
  return backslashes % 2 == 0;  // not ending in a lone backslash (it would escape the closing quote)
}

void test_dot_escape(void **) {
  assert_string_equal(dot_escape("").c_str(), "");
  assert_string_equal(dot_escape("leaf01 \xc3\xa9").c_str(), "leaf01 \xc3\xa9");
  assert_string_equal(dot_escape("say \"hi\"").c_str(), "say \\\"hi\\\"");
  assert_string_equal(dot_escape("a\\b\\").c_str(), "a\\\\b\\\\");
  assert_string_equal(dot_escape("two\nlines\n").c_str(), "two\\nlines\\n");
  assert_string_equal(dot_escape("\t\r").c_str(), "  ");
  assert_string_equal(dot_escape("\x01\xff\xc3").c_str(), "???");
  assert_string_equal(dot_escape("<b>&</b>").c_str(), "<b>&</b>");  // not HTML: left alone
  for (const char *s : {"\"", "\\", "\\\"", "\"\\", "x\\\n\"", "\\\\\"\n\\", "\xc3\"", "\xe2\x82\"\\"})
    assert_true(one_dot_string(dot_escape(s)));
  std::string all;
  for (int c = 0; c < 256; ++c) all += char(c);
  assert_true(one_dot_string(dot_escape(all)));
}

void test_xml_escape(void **) {
  assert_string_equal(xml_escape("").c_str(), "");
  assert_string_equal(xml_escape("a<b>&c\"d'").c_str(), "a&lt;b&gt;&amp;c&quot;d'");
  assert_string_equal(xml_escape("&amp;").c_str(), "&amp;amp;");
  assert_string_equal(xml_escape("caf\xc3\xa9").c_str(), "caf\xc3\xa9");
  assert_string_equal(xml_escape("a\tb\nc\rd").c_str(), "a b c d");
  assert_string_equal(xml_escape(std::string("\0\x01\x1f\x7f\xff\xc2\x85", 7)).c_str(), "??????");
  assert_string_equal(xml_escape("back\\slash").c_str(), "back\\slash");
  std::string all;
  for (int c = 0; c < 256; ++c) all += char(c);
  const std::string e = xml_escape(all);
  assert_true(clean(e));
  assert_true(e.find_first_of("<>\"") == std::string::npos);
  for (size_t i = e.find('&'); i != std::string::npos; i = e.find('&', i + 1))
    assert_true(e.compare(i, 5, "&amp;") == 0 || e.compare(i, 4, "&lt;") == 0 || e.compare(i, 4, "&gt;") == 0 ||
                e.compare(i, 6, "&quot;") == 0);
}

// Graphviz takes the DOT text without a complaint and writes an SVG (skipped without Graphviz).
void expect_graphviz_accepts(const std::string &dot_text) {
  const std::string dot = DOT_PROGRAM;
  if (dot.empty()) return;
  char dir[] = "/tmp/test_text.XXXXXX";
  assert_non_null(mkdtemp(dir));
  const std::string base = std::string(dir) + "/g";
  std::ofstream(base + ".dot") << dot_text;
  const std::string cmd = dot + " -Tsvg " + base + ".dot -o " + base + ".svg 2>" + base + ".err";
  const int rc = std::system(cmd.c_str());
  std::stringstream e, s;
  e << std::ifstream(base + ".err").rdbuf();
  s << std::ifstream(base + ".svg").rdbuf();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (rc != 0 || !e.str().empty()) fail_msg("dot failed (%d): %s\n%s", rc, e.str().c_str(), dot_text.c_str());
  assert_true(s.str().find("<svg") != std::string::npos);
}

// Names with a quote, a backslash, '<', '>' or '&' in a fabric dump reach the switch graph's DOT
// and show's DOT (HTML-like labels) as text: each label stays one DOT string or well-formed XML.
void test_dump_names_to_dot(void **) {
  const std::string dump =
      "switchguid=0x1000(1000)\n"
      "Switch  4 \"S-0000000000001000\"  # \"leaf\"A\\1\" base port 0 lid 1 lmc 0\n"
      "[1]  \"H-0000000000002000\"[1](2001)  # \"n\"01\\ mlx5_0\" lid 2 4xHDR\n"
      "[2]  \"H-0000000000003000\"[1](3001)  # \"n<02>&x mlx5_0\" lid 3 4xHDR\n"
      "\n"
      "caguid=0x2000\n"
      "Ca  1 \"H-0000000000002000\"  # \"n\"01\\ mlx5_0\"\n"
      "[1](2001)  \"S-0000000000001000\"[1]  # lid 2 lmc 0 \"leaf\"A\\1\" lid 1 4xHDR\n"
      "\n"
      "caguid=0x3000\n"
      "Ca  1 \"H-0000000000003000\"  # \"n<02>&x mlx5_0\"\n"
      "[1](3001)  \"S-0000000000001000\"[2]  # lid 3 lmc 0 \"leaf\"A\\1\" lid 1 4xHDR\n";
  std::istringstream in(dump);
  const Fabric f = parse_ibnetdiscover(in, "inline.txt");
  const Topology t = classify(f, ClassifyOptions{});
  assert_int_equal(t.hosts.size(), 2);
  assert_int_equal(t.switches.size(), 1);
  // A switch takes its description as its name only if Slurm accepts it (classify.cpp), but a
  // topology.json may hold any name: one with a quote, a backslash and a newline.
  assert_string_equal(t.switches[0].name.c_str(), "S-0000000000001000");
  Topology tn = t;
  tn.switches[0].name = "leaf\"A\\1\nB";
  const std::string dn = to_dot(tn);
  assert_true(dn.find("[label=\"leaf\\\"A\\\\1\\nB\\n2 hosts\"") != std::string::npos);
  expect_graphviz_accepts(dn);
  for (bool hosts : {false, true}) {
    const std::string d = to_dot(t, hosts);
    if (hosts) {
      assert_true(d.find("[label=\"n\\\"01\\\\\", shape=ellipse") != std::string::npos);
      assert_true(d.find("[label=\"n<02>&x\", shape=ellipse") != std::string::npos);
    }
    expect_graphviz_accepts(d);
  }
  ShowInput in_show;
  in_show.nodes = {{"n\"01\\", "idle", ""}, {"n<02>&x", "down*", "bad \"cable\" <&>\n"}};
  in_show.jobs = {{7, "RUNNING", "u<1>", "j\"ob\\ & <b>", "p", 1, "n<02>&x", "None"}};
  const ShowModel m = build_show(t, in_show);
  const std::string s = show_dot(m);
  assert_true(s.find("n&lt;02&gt;&amp;x") != std::string::npos);
  assert_true(s.find("n&quot;01\\") != std::string::npos);
  assert_true(s.find("j&quot;ob\\ &amp; &lt;b&gt;") != std::string::npos);
  assert_true(s.find("<02>") == std::string::npos);
  expect_graphviz_accepts(s);
  expect_graphviz_accepts(show_job_dot(m, 7));
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
      cmocka_unit_test(test_trim),
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_dot_escape),
      cmocka_unit_test(test_xml_escape),
      cmocka_unit_test(test_dump_names_to_dot),
      cmocka_unit_test(test_binary_topology_message),
  };
  return cmocka_run_group_tests(tests, nullptr, nullptr);
}
