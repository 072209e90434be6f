/* devlog: a simulated host's syslog daemon. Binds a unix datagram socket at
 * SOCKET (the host's /dev/log, in its private /dev) and appends each
 * message it receives, as one line (newlines and NULs inside a message
 * written as "\n" and "\0"), to FILE (HOSTDIR/syslog, read back by the
 * tests). Started by host_init.sh; it ends with the host's PID namespace.
 *
 *   devlog SOCKET FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 3 || strlen(argv[1]) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
    fprintf(stderr, "usage: devlog SOCKET FILE\n");
    return 2;
  }
  int out = open(argv[2], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  int sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (out < 0 || sock < 0) {
    perror("devlog");
    return 1;
  }
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  strcpy(addr.sun_path, argv[1]);
  unlink(argv[1]);
  if (bind(sock, (struct sockaddr *)&addr, sizeof addr) != 0 || chmod(argv[1], 0666) != 0) {
    perror("devlog: bind");
    return 1;
  }
  static char msg[65536], line[2 * sizeof msg + 1];
  for (;;) {
    ssize_t n = recv(sock, msg, sizeof msg, 0);
    if (n < 0) continue;
    size_t k = 0;
    for (ssize_t i = 0; i < n; ++i) {
      if (msg[i] == '\n' || msg[i] == '\0') {
        line[k++] = '\\';
        line[k++] = msg[i] == '\n' ? 'n' : '0';
      } else {
        line[k++] = msg[i];
      }
    }
    line[k++] = '\n';
    if (write(out, line, k) < 0) perror("devlog: write");
  }
}
