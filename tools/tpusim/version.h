#pragma once

// The CLI's version: project(VERSION) and the git revision it was built from
// (cmake/GitRevision.cmake; "unknown" outside a git checkout).

namespace tpusim::cli {

extern const char* const kVersion;
extern const char* const kGitRevision;

}  // namespace tpusim::cli
