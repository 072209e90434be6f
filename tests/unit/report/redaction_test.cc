#include "fleetreap/report/redaction.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(RedactionTest, SecretsGoOtherWordsStay) {
  struct Row {
    const char* in;
    const char* out;
  };
  const Row rows[] = {
      {"python3 -m vllm.entrypoints.openai.api_server --model m --api-key sk-123 --port 8000",
       "python3 -m vllm.entrypoints.openai.api_server --model m --api-key <redacted> --port 8000"},
      {"serve --api-key=sk-123", "serve --api-key=<redacted>"},
      {"serve --token abc --hf-token=hf_x --auth_token y",
       "serve --token <redacted> "
       "--hf-token=<redacted> --auth_token "
       "<redacted>"},
      {"db --password hunter2 --db-passwd=x --client-secret s",
       "db --password <redacted> --db-passwd=<redacted> --client-secret <redacted>"},
      {"aws --aws-access-key AK --private-key k",
       "aws --aws-access-key <redacted> --private-key "
       "<redacted>"},
      {"env HF_TOKEN=hf_abc AWS_SECRET_ACCESS_KEY=z OPENAI_API_KEY=k DB_PASSWORD=p python3",
       "env HF_TOKEN=<redacted> AWS_SECRET_ACCESS_KEY=<redacted> OPENAI_API_KEY=<redacted> "
       "DB_PASSWORD=<redacted> python3"},
      {"git clone https://user:pat123@github.com/x.git",
       "git clone "
       "https://user:<redacted>@github.com/"
       "x.git"},
      // Kept: look-alikes and flags with no value left.
      {"vllm --tokenizer meta/llama --tokenizer-mode auto TOKENIZERS_PARALLELISM=false",
       "vllm --tokenizer meta/llama --tokenizer-mode auto TOKENIZERS_PARALLELISM=false"},
      {"x --token --verbose", "x --token --verbose"},
      {"x --api-key", "x --api-key"},
      {"-- = --= https://host/a@b", "-- = --= https://host/a@b"},
      {"", ""},
  };
  for (const Row& row : rows) EXPECT_EQ(RedactCommandLine(row.in), row.out) << row.in;
}

TEST(RedactionTest, EveryHolderOfAHost) {
  HostReport host;
  Holder holder;
  holder.cmdline = "serve --api-key k";
  host.holders = {holder, holder};
  RedactHostReport(&host);
  for (const Holder& h : host.holders) EXPECT_EQ(h.cmdline, "serve --api-key <redacted>");
}

}  // namespace
}  // namespace fleetreap
