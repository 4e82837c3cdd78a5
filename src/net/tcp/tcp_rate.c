/* The rate a tcp connection delivers, as its kernel measures it (apart from
 * tcp_impl.h: glibc's struct tcp_info stops before the field). */
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

uint64_t px_tcp_delivery_rate(int fd, int *app_limited);

/* Bytes per second the connection on fd delivered recently, 0 unknown;
 * *app_limited: the sender had too little to send for the rate to tell
 * what the path carries. */
uint64_t px_tcp_delivery_rate(int fd, int *app_limited)
{
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) ||
        len < offsetof(struct tcp_info, tcpi_delivery_rate) + sizeof(ti.tcpi_delivery_rate))
        return 0;
    *app_limited = ti.tcpi_delivery_rate_app_limited;
    return ti.tcpi_delivery_rate;
}
