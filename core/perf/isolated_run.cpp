#include "core/perf/isolated_run.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>

#include "core/transport/uot_error.h"

namespace uot::perf {
namespace {

bool writeAll(int fd, const std::string& text)
{
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += std::size_t(n);
    }
    return true;
}

}  // namespace

IsolatedOutcome runIsolated(const std::function<std::string()>& work)
{
    const pid_t parent = getpid();
    int fds[2];
    if (pipe(fds) != 0) throw Error(ErrorCode::Unavailable, std::string("cannot create a pipe: ") + std::strerror(errno));
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        throw Error(ErrorCode::Unavailable, std::string("cannot fork a child process: ") + std::strerror(errno));
    }
    if (pid == 0) {
        // A case must not outlive the bench that forked it: a signal that ends only
        // the parent (kill PID, a stopped terminal session) would otherwise leave
        // the child solving on, unseen. The check after prctl covers a parent that
        // died before the request was made.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(3);
        close(fds[0]);
        int status = 0;
        std::string message;
        try {
            const std::string output = work();
            message.assign(1, 'O');
            message.append(output);
        } catch (const std::exception& e) {
            message.assign(1, 'E');
            message.append(e.what());
            status = 1;
        } catch (...) {
            message = "Eunknown exception";
            status = 1;
        }
        if (!writeAll(fds[1], message)) status = 2;
        close(fds[1]);
        _exit(status);  // no atexit handlers, no static destructors of the parent's objects
    }
    close(fds[1]);
    std::string received;
    char buffer[4096];
    for (;;) {
        const ssize_t n = read(fds[0], buffer, sizeof(buffer));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        received.append(buffer, std::size_t(n));
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }

    IsolatedOutcome outcome;
    if (WIFSIGNALED(status)) {
        outcome.failure = std::string("the child process was killed by signal ") + std::to_string(WTERMSIG(status)) +
                          " (" + strsignal(WTERMSIG(status)) + ")" +
                          (WTERMSIG(status) == SIGKILL ? "; out of memory?" : "");
    } else if (!received.empty() && received[0] == 'E') {
        outcome.failure = received.substr(1);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || received.empty()) {
        outcome.failure = "the child process exited with status " + std::to_string(WEXITSTATUS(status));
    } else {
        outcome.ok = true;
        outcome.output = received.substr(1);
    }
    return outcome;
}

}  // namespace uot::perf
