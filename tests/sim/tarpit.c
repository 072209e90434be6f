/*
 * tarpit: a TCP listener that accepts connections and never sends a byte
 * (no SSH banner). Used for the "listener that never sends the banner"
 * network fault of the simulated fleet. Usage: tarpit ADDRESS PORT
 * Holds every accepted connection open until the peer closes it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 1024

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: tarpit ADDRESS PORT\n");
    return 2;
  }
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_port = htons((unsigned short)atoi(argv[2]));
  if (inet_pton(AF_INET, argv[1], &addr.sin_addr) != 1) {
    fprintf(stderr, "tarpit: bad address %s\n", argv[1]);
    return 2;
  }
  /* The sshd this replaces may still be closing its listener: retry a
   * while (10 s) rather than fail on EADDRINUSE. */
  int bound = -1;
  for (int tries = 0; tries < 1000; tries++) {
    bound = bind(listener, (struct sockaddr *)&addr, sizeof addr);
    if (bound == 0 || errno != EADDRINUSE) break;
    usleep(10000);
  }
  if (bound != 0 || listen(listener, 128) != 0) {
    perror("tarpit");
    return 1;
  }
  struct pollfd fds[MAX_CONNS + 1];
  int n = 1;
  fds[0].fd = listener;
  fds[0].events = POLLIN;
  for (;;) {
    if (poll(fds, (nfds_t)n, -1) < 0) continue;
    for (int i = n - 1; i >= 1; i--) {
      char buf[512];
      if (fds[i].revents && read(fds[i].fd, buf, sizeof buf) <= 0) {
        close(fds[i].fd);
        fds[i] = fds[--n];
      }
    }
    if (fds[0].revents & POLLIN) {
      int c = accept(listener, NULL, NULL);
      if (c >= 0 && n <= MAX_CONNS) {
        fds[n].fd = c;
        fds[n].events = POLLIN;
        n++;
      } else if (c >= 0) {
        close(c);
      }
    }
  }
}
