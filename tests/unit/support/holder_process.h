// ForkHolder: a child of the test, a sleep of 30 s holding a file open (a
// stand-in device file), for the tests that run the signal and audit
// scripts against live processes; the test ends it, by PID. ProcessStartTime
// reads a process's start time as the scan does. Not thread-safe (fork).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "fleetreap/model/holder.h"
#include "fleetreap/remote/proc_scan.h"

namespace fleetreap {

/// Forks a sleep (30 s) that holds "file" open first (nothing when ""). The
/// child exits 3 when it cannot open "file".
inline pid_t ForkHolder(const std::string& file) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!file.empty() && open(file.c_str(), O_RDONLY) < 0) _exit(3);
    execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(4);
  }
  return pid;
}

/// The start time of "pid" (/proc/PID/stat, ParseProcStat).
inline uint64_t ProcessStartTime(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Holder holder;
  EXPECT_TRUE(ParseProcStat(text, &holder).ok());
  return holder.start_time;
}

}  // namespace fleetreap
