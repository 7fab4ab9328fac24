// Unit tests of manifest.json: the write/read round trip and the errors a damaged or foreign manifest raises.
#include "manifest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "test_support.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using parity::Manifest;
using parity::ManifestError;
using parity::ScenarioRecord;
using parity::testing::TempDir;

namespace {

class ManifestTest : public ::testing::Test {
 protected:
  fs::path file() const { return dir_.path() / parity::kManifestName; }
  void write_text(const std::string& text) const { std::ofstream(file(), std::ios::trunc) << text; }

  // A manifest document as write_manifest produces it, for tests that damage one field.
  json valid_doc() const {
    return {{"format", "parity-manifest"},
            {"version", parity::kManifestVersion},
            {"backend", {{"name", "numpy"}}},
            {"complete", true},
            {"scenarios", json::array({{{"id", "m.f"}, {"status", "ok"}, {"file", "results/m.f.parity"}}})}};
  }

  // Reads the manifest expecting a ManifestError; returns its message.
  std::string read_error() const {
    try {
      parity::read_manifest(dir_.path());
    } catch (const ManifestError& e) {
      return e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected ManifestError, got another exception: " << e.what();
      return "";
    }
    ADD_FAILURE() << "read_manifest did not throw";
    return "";
  }

  static bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  TempDir dir_;
};

Manifest sample(const fs::path& dir) {
  Manifest m;
  m.dir = dir;
  m.backend = {{"name", "fsproxy"},
               {"spec", "fsproxy"},
               {"version", "0.1"},
               {"role", "candidate"},
               {"type_map", {{"numpy.ndarray", "fsproxy.Array"}}}};
  m.environment = {{"python", "3.12.1"}, {"numpy", "2.1.0"}, {"platform", "Linux-x86_64"}};
  m.run = {{"parity", "0.1.0"}, {"scenarios", {"scenarios/"}}, {"started", "2024-01-01T00:00:00Z"}, {"seconds", 1.5}};
  m.complete = true;
  ScenarioRecord ok;
  ok.id = "mod.test_ok[n=1]";
  ok.status = "ok";
  ok.file = "results/mod.test_ok[n=1].parity";
  ok.pickle_offset = 4096;
  ok.seconds = 0.125;
  ok.meta = {{"module", "mod"}, {"function", "test_ok"}, {"params", {{"n", 1}}}, {"rtol", 1e-5}, {"tags", {"fast"}}};
  ScenarioRecord err;
  err.id = "mod.test_err";
  err.status = "error";
  err.seconds = 2.0;
  err.error = {{"type", "ValueError"}, {"message", "bad \"input\"\n\u00e9"}, {"traceback", "Traceback ..."}};
  err.meta = {{"module", "mod"}, {"function", "test_err"}, {"xfail", {{"compare", "known"}}}};
  m.scenarios = {ok, err};
  return m;
}

TEST_F(ManifestTest, WriteThenReadRoundTrips) {
  const Manifest written = sample(dir_.path());
  parity::write_manifest(written);
  ASSERT_TRUE(fs::exists(file()));
  const Manifest read = parity::read_manifest(dir_.path());
  EXPECT_EQ(read.dir, dir_.path());
  EXPECT_EQ(read.backend, written.backend);
  EXPECT_EQ(read.environment, written.environment);
  EXPECT_EQ(read.run, written.run);
  EXPECT_TRUE(read.complete);
  ASSERT_EQ(read.scenarios.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(written.scenarios[i].id);
    EXPECT_EQ(read.scenarios[i].id, written.scenarios[i].id);
    EXPECT_EQ(read.scenarios[i].status, written.scenarios[i].status);
    EXPECT_EQ(read.scenarios[i].file, written.scenarios[i].file);
    EXPECT_EQ(read.scenarios[i].pickle_offset, written.scenarios[i].pickle_offset);
    EXPECT_DOUBLE_EQ(read.scenarios[i].seconds, written.scenarios[i].seconds);
    EXPECT_EQ(read.scenarios[i].error, written.scenarios[i].error);
    EXPECT_EQ(read.scenarios[i].meta, written.scenarios[i].meta);
  }
  EXPECT_TRUE(read.scenarios[0].error.is_null());
  EXPECT_EQ(parity::to_json(read), parity::to_json(written));
}

TEST_F(ManifestTest, IncompleteFlagSurvives) {
  Manifest m = sample(dir_.path());
  m.complete = false;
  m.scenarios.clear();
  parity::write_manifest(m);
  const Manifest read = parity::read_manifest(dir_.path());
  EXPECT_FALSE(read.complete);
  EXPECT_TRUE(read.scenarios.empty());
}

TEST_F(ManifestTest, WriteLeavesOnlyTheManifest) {
  parity::write_manifest(sample(dir_.path()));
  parity::write_manifest(sample(dir_.path()));  // replacing an existing manifest
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(dir_.path())) {
    ++entries;
    EXPECT_EQ(e.path().filename(), parity::kManifestName);
  }
  EXPECT_EQ(entries, 1u);
}

TEST_F(ManifestTest, DocumentIsVersionedJson) {
  parity::write_manifest(sample(dir_.path()));
  std::ifstream in(file());
  const json doc = json::parse(in);
  EXPECT_EQ(doc.at("format"), "parity-manifest");
  EXPECT_EQ(doc.at("version"), parity::kManifestVersion);
  EXPECT_FALSE(doc.at("scenarios").at(0).contains("error"));  // null errors are left out
  EXPECT_EQ(doc.at("scenarios").at(1).at("error").at("type"), "ValueError");
}

// The run writes its manifest from entries serialized once each (manifest_entry_text): the text must be byte for
// byte the whole document's dump, whatever the records hold (nested values, escapes, invalid UTF-8, empty ones).
TEST(ManifestText, IsTheWholeDocumentsDump) {
  Manifest m = sample("unused");
  ScenarioRecord odd;
  odd.id = "mod.odd";
  odd.status = "ok";
  odd.file = "results/mod.odd.parity";
  odd.meta = {{"params", {{"x", json::array({1, json::array(), json::object(), nullptr, 2.5})}}},
              {"tags", json::array()}};
  odd.fidelity = {{"outputs['a\\n \\\"scenarios\\\": []']", "xxh3:0"}, {"outputs", "xxh3:1"}};
  odd.output = {{"stdout", std::string("line\n \"scenarios\": []\n\xff\xfe")}, {"stderr", ""}, {"truncated", false}};
  m.scenarios.push_back(odd);
  m.run["note"] = "\n \"scenarios\": []";
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, m.scenarios.size()}) {
    Manifest part = m;
    part.scenarios.resize(count);
    std::vector<std::string> texts;
    for (const ScenarioRecord& r : part.scenarios) texts.push_back(parity::manifest_entry_text(r));
    std::vector<const std::string*> entries;
    for (const std::string& t : texts) entries.push_back(&t);
    SCOPED_TRACE(count);
    EXPECT_EQ(parity::manifest_text(part, entries),
              parity::to_json(part).dump(1, ' ', false, json::error_handler_t::replace) + "\n");
  }
}

// manifest_entry_text writes the record without converting it (to_json): every field, present or not, and strings
// the dump must escape or replace (invalid UTF-8), come out as the dump of the converted record, indented for its
// place.
TEST(ManifestText, EntryIsTheRecordsDumpWithEveryField) {
  const auto indented_dump = [](const ScenarioRecord& r) {
    std::string text;
    for (const char ch : parity::to_json(r).dump(1, ' ', false, json::error_handler_t::replace)) {
      text += ch;
      if (ch == '\n') text += "  ";
    }
    return text;
  };
  ScenarioRecord full;
  full.id = std::string("m.s[\"q\"\t\x01\xff]");
  full.status = "xfail";
  full.file = std::string("results/\xc3\x28.parity");
  full.pickle_file = "results/p\\.parity.pickle";
  full.seconds = 1e-7;
  full.error = {{"type", "E"}, {"message", std::string("\xe9\n")}, {"traceback", ""}, {"reason", "r"}};
  full.meta = {{"params", {{"x", json::array({1, -2, 3.25, true, nullptr, json::object()})}}}, {"tags", {"a"}}};
  full.fidelity = {{"outputs", "xxh3:0"}, {"outputs[0]", "xxh3:1"}};
  full.fidelity_values = {{"outputs", "builtins.list of 1"}};
  full.pickle_error = {{"type", "PicklingError"}, {"message", "no"}, {"path", "outputs"}};
  full.output = {{"stdout", "x\n"}, {"stderr", ""}, {"truncated", true}};
  EXPECT_EQ(parity::manifest_entry_text(full), indented_dump(full));
  ScenarioRecord bare;  // the fields a record always has, one of them a null declaration
  bare.meta = nullptr;
  EXPECT_EQ(parity::manifest_entry_text(bare), indented_dump(bare));
  bare.meta = json::object();
  bare.seconds = 3;
  EXPECT_EQ(parity::manifest_entry_text(bare), indented_dump(bare));
}

TEST_F(ManifestTest, MissingDirectory) {
  const fs::path missing = dir_.path() / "does-not-exist";
  try {
    parity::read_manifest(missing);
    FAIL() << "read_manifest did not throw";
  } catch (const ManifestError& e) {
    EXPECT_TRUE(contains(e.what(), missing.string())) << e.what();
  }
}

TEST_F(ManifestTest, DirectoryIsAFile) {
  const fs::path not_dir = dir_.path() / "plain-file";
  std::ofstream(not_dir) << "x";
  EXPECT_THROW(parity::read_manifest(not_dir), ManifestError);
}

TEST_F(ManifestTest, MissingFile) {
  const std::string message = read_error();
  EXPECT_TRUE(contains(message, file().string())) << message;
  EXPECT_TRUE(contains(message, "missing")) << message;
}

TEST_F(ManifestTest, MalformedJson) {
  write_text("{\"format\": \"parity-manifest\", \"version\": 1, ");
  const std::string message = read_error();
  EXPECT_TRUE(contains(message, file().string())) << message;
  EXPECT_TRUE(contains(message, "malformed")) << message;
}

TEST_F(ManifestTest, EmptyFile) {
  write_text("");
  EXPECT_TRUE(contains(read_error(), file().string()));
}

TEST_F(ManifestTest, WrongFieldTypes) {
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, json>>{{"version", "one"}, {"scenarios", 3}, {"format", 7}}) {
    SCOPED_TRACE(field);
    json doc = valid_doc();
    doc[field] = value;
    write_text(doc.dump());
    EXPECT_TRUE(contains(read_error(), file().string()));
  }
}

TEST_F(ManifestTest, MissingRequiredFields) {
  for (const char* field : {"version", "backend", "scenarios"}) {
    SCOPED_TRACE(field);
    json doc = valid_doc();
    doc.erase(field);
    write_text(doc.dump());
    EXPECT_TRUE(contains(read_error(), file().string()));
  }
  json doc = valid_doc();
  doc["scenarios"][0].erase("status");
  write_text(doc.dump());
  EXPECT_TRUE(contains(read_error(), file().string()));
}

TEST_F(ManifestTest, NotAParityManifest) {
  json doc = valid_doc();
  doc["format"] = "something-else";
  write_text(doc.dump());
  const std::string message = read_error();
  EXPECT_TRUE(contains(message, file().string())) << message;
  EXPECT_TRUE(contains(message, "not a parity manifest")) << message;
}

TEST_F(ManifestTest, AVersionThatIsNotAnIntegerIsRefused) {
  for (const json& version : {json(1e30), json(1.5), json("1")}) {
    json doc = valid_doc();
    doc["version"] = version;
    write_text(doc.dump());
    const std::string message = read_error();
    EXPECT_TRUE(contains(message, "has no integer \"version\"")) << message;
  }
}

TEST_F(ManifestTest, NewerVersionIsRefused) {
  json doc = valid_doc();
  doc["version"] = parity::kManifestVersion + 1;
  write_text(doc.dump());
  const std::string message = read_error();
  EXPECT_TRUE(contains(message, file().string())) << message;
  EXPECT_TRUE(contains(message, "newer")) << message;
  EXPECT_TRUE(contains(message, std::to_string(parity::kManifestVersion + 1))) << message;
}

TEST_F(ManifestTest, CurrentVersionIsAccepted) {
  write_text(valid_doc().dump());
  const Manifest m = parity::read_manifest(dir_.path());
  ASSERT_EQ(m.scenarios.size(), 1u);
  EXPECT_EQ(m.scenarios[0].file, "results/m.f.parity");
  EXPECT_TRUE(m.complete);
}

TEST_F(ManifestTest, ResultFileOutsideTheDirectoryIsRefused) {
  for (const char* path : {"../elsewhere/x.parity", "results/../../x.parity", "/etc/passwd"}) {
    SCOPED_TRACE(path);
    json doc = valid_doc();
    doc["scenarios"][0]["file"] = path;
    write_text(doc.dump());
    const std::string message = read_error();
    EXPECT_TRUE(contains(message, file().string())) << message;
    EXPECT_TRUE(contains(message, "m.f")) << message;  // names the scenario
  }
}

TEST_F(ManifestTest, ResultFilesOfTheResultsDirectoryAreAccepted) {
  // A result file another parity version named otherwise is still read, as long as it is in results/.
  for (const char* path : {"results/m.f[r=1..2]-0123.parity", "results/a..b.parity.pickle", "results/x"}) {
    SCOPED_TRACE(path);
    json doc = valid_doc();
    doc["scenarios"][0]["file"] = path;
    write_text(doc.dump());
    EXPECT_EQ(parity::read_manifest(dir_.path()).scenarios[0].file, path);
  }
}

TEST_F(ManifestTest, APickleOffsetIsAByteOffsetInTheScenariosResultFile) {
  json doc = valid_doc();
  doc["scenarios"][0]["pickle_offset"] = 384;
  write_text(doc.dump());
  EXPECT_EQ(parity::read_manifest(dir_.path()).scenarios[0].pickle_offset, 384u);
  for (const json& offset : {json(-1), json(1.5), json("384"), json(nullptr), json(true), json(1e30)}) {
    SCOPED_TRACE(offset.dump());
    doc["scenarios"][0]["pickle_offset"] = offset;
    write_text(doc.dump());
    const std::string message = read_error();
    EXPECT_TRUE(contains(message, "m.f") && contains(message, "pickle_offset")) << message;
  }
  // Where no result file holds it, or beside a pickle file of its own, an offset means nothing: refused.
  for (const auto& [field, value] : {std::pair{"file", json("")}, std::pair{"pickle_file", json("results/p")}}) {
    SCOPED_TRACE(field);
    json bad = valid_doc();
    bad["scenarios"][0]["pickle_offset"] = 0;
    bad["scenarios"][0][field] = value;
    write_text(bad.dump());
    const std::string message = read_error();
    EXPECT_TRUE(contains(message, "m.f") && contains(message, "pickle_offset")) << message;
  }
}

TEST_F(ManifestTest, AVersion1RunsPickleFileIsStillRead) {
  json doc = valid_doc();
  doc["version"] = 1;
  doc["scenarios"][0]["pickle_file"] = "results/m.f.parity.pickle";
  write_text(doc.dump());
  const Manifest m = parity::read_manifest(dir_.path());
  EXPECT_EQ(m.scenarios[0].pickle_file, "results/m.f.parity.pickle");
  EXPECT_FALSE(m.scenarios[0].pickle_offset);
}

TEST_F(ManifestTest, ResultFileNotDirectlyInResultsIsRefused) {
  for (const char* path :
       {"results/..", "results/.hidden", "results/", "results/a/b.parity", "manifest.json", "results//x"}) {
    SCOPED_TRACE(path);
    json doc = valid_doc();
    doc["scenarios"][0]["file"] = path;
    write_text(doc.dump());
    EXPECT_TRUE(contains(read_error(), "m.f"));
  }
}

TEST_F(ManifestTest, UnknownRoleIsRefusedByName) {
  // The role goes into every Repro line: a manifest cannot choose what those run.
  for (const json& role : {json("candidate; touch x #"), json(""), json(5), json(nullptr)}) {
    SCOPED_TRACE(role.dump());
    json doc = valid_doc();
    doc["backend"]["role"] = role;
    write_text(doc.dump());
    const std::string message = read_error();
    EXPECT_TRUE(contains(message, file().string())) << message;
    EXPECT_TRUE(contains(message, "backend.role")) << message;
  }
  for (const char* role : parity::kRoles) {
    json doc = valid_doc();
    doc["backend"]["role"] = role;
    write_text(doc.dump());
    EXPECT_EQ(parity::read_manifest(dir_.path()).backend["role"], role);
  }
}

TEST(ResultFileFor, IsTheReadableIdAndItsSha256) {
  EXPECT_EQ(parity::result_file_for("abc"), "results/abc-ba7816bf8f01cfea.parity");
  EXPECT_EQ(parity::result_file_for(""), "results/_-e3b0c44298fc1c14.parity");
  // Two SHA-256 blocks (the padding spills over), from FIPS 180-4's examples.
  EXPECT_EQ(parity::result_file_for("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "results/abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq-248d6a61d20638b8.parity");
  // Each run of other characters becomes one '_', and a '.' never follows another.
  EXPECT_TRUE(parity::result_file_for("m.f[r=1..2]").starts_with("results/m.f_r_1._2_-"));
  EXPECT_EQ(parity::pickle_file_for("abc"), "results/abc-ba7816bf8f01cfea.parity.pickle");
}

// Lengths around the padding's bounds (55, 56 and 64 bytes of a block, then whole blocks hashed in place before the
// tail): the digests Python's hashlib.sha256 gives.
TEST(ResultFileFor, DigestsEveryLengthAroundABlock) {
  const std::pair<std::size_t, const char*> expected[] = {
      {55, "9f4390f8d30c2dd9"},  {56, "b35439a4ac6f0948"},  {63, "7d3e74a05d7db15b"},  {64, "ffe054fe7ae0cb6d"},
      {65, "635361c48bb9eab1"},  {119, "31eba51c313a5c08"}, {120, "2f3d335432c70b58"}, {127, "c57e9278af78fa3c"},
      {128, "6836cf13bac400e9"}, {200, "c2a908d98f5df987"}};
  for (const auto& [length, digest] : expected)
    EXPECT_EQ(parity::result_file_for(std::string(length, 'a')),
              "results/" + std::string(std::min<std::size_t>(length, 80), 'a') + "-" + digest + ".parity")
        << length;
}

TEST(ResultFileFor, IsSafeAndDistinctForAnyId) {
  const std::vector<std::string> ids = {"m.f[r=1..2]",
                                        "m.f[r=1.2]",
                                        "m.f[r=1_2]",
                                        "m.f[r=1/2]",
                                        "..",
                                        "../x",
                                        "/etc/passwd",
                                        ".hidden",
                                        "",
                                        ".",
                                        "a/../../b",
                                        "x\n\x1b[2J\xff",
                                        std::string(10000, '.'),
                                        std::string(10000, 'a'),
                                        std::string(10000, 'a') + "b"};
  std::set<std::string> names;
  for (const std::string& id : ids) {
    SCOPED_TRACE(id.substr(0, 40));
    const std::string file = parity::result_file_for(id), pickle = parity::pickle_file_for(id);
    EXPECT_TRUE(parity::is_safe_result_path(file)) << file;
    EXPECT_TRUE(parity::is_safe_result_path(pickle)) << pickle;
    const std::string name = file.substr(std::string("results/").size());
    EXPECT_EQ(name.find(".."), std::string::npos) << name;
    EXPECT_NE(name.front(), '.') << name;
    EXPECT_LE(pickle.size() + 32, 255u) << "room for the .tmp-<pid>-<n> suffix of an atomic write";
    EXPECT_TRUE(parity::is_result_file_of(id, file));
    EXPECT_TRUE(parity::is_result_file_of(id, pickle));
    EXPECT_FALSE(parity::is_result_file_of(id + "x", file));
    names.insert(file);
  }
  EXPECT_EQ(names.size(), ids.size());
}

}  // namespace
