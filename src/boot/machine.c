#include "machine.h"
#include "boot.h"
#include "../util/log.h"
#include "../util/param.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static px_boot_machine_t px_machine;
static int px_machine_start_cpu = -1; /* PX_BIND=spread: CPU to start on, else -1 */

static int px_boot_count_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Host name and boot identifier: equal for ranks on one physical machine,
 * whatever node the launcher says they are on. */
static void px_boot_machine_id(char *buf, size_t len)
{
    char host[256] = "", bootid[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(bootid, sizeof(bootid), f))
            bootid[0] = 0;
        fclose(f);
    }
    gethostname(host, sizeof(host) - 1);
    snprintf(buf, len, "%s/%s", host, bootid);
}

px_status_t px_boot_machine_detect(const px_boot_info_t *boot)
{
    char me[320], other[320];
    size_t len;
    px_boot_machine_id(me, sizeof(me));
    px_status_t st = px_boot_put("host", me, strlen(me) + 1);
    if (st == PX_OK)
        st = px_boot_fence();
    if (st != PX_OK)
        return st;
    px_boot_machine_t m = {.cpus = px_boot_count_cpus()};
    for (int r = 0; r < boot->size; r++)
        if (px_boot_get(r, "host", other, sizeof(other), &len) == PX_OK && !strcmp(other, me)) {
            if (r == boot->rank)
                m.index = m.ranks;
            m.ranks++;
        }
    m.oversub = m.ranks > m.cpus;
    px_machine = m;
    return PX_OK;
}

const px_boot_machine_t *px_boot_machine(void) { return &px_machine; }

/* The i-th rank on this machine gets the i-th CPU it may use (wrapping when
 * ranks outnumber CPUs). With ranks sharing cores, a process the scheduler
 * moves between them leaves its partners waiting (docs/architecture.md,
 * "Progress and placement"). */
void px_boot_bind(void)
{
    cpu_set_t set, one;
    px_machine_start_cpu = -1;
    if (!strcmp(px_params.bind, "none"))
        return;
    int core = !strcmp(px_params.bind, "core");
    if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) < 1)
        return;
    int k = px_machine.index % CPU_COUNT(&set), cpu = -1;
    for (int c = 0; c < CPU_SETSIZE && k >= 0; c++)
        if (CPU_ISSET(c, &set) && k-- == 0)
            cpu = c;
    if (cpu < 0 || CPU_COUNT(&set) == 1)
        return;
    if (!core) { /* alone on the machine: nothing to spread */
        px_machine_start_cpu = px_machine.ranks > 1 ? cpu : -1;
        return;
    }
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0)
        px_warn("boot", "PX_BIND=core: could not bind to CPU %d: %s", cpu, strerror(errno));
    else
        px_debug("boot", "bound to CPU %d (rank %d on this machine)", cpu, px_machine.index);
}

/* The scheduler starts the ranks of a machine wherever it likes and, while
 * they are all runnable (waiting ranks poll and yield), rarely moves one
 * that has just run, so ranks that start piled up on a core tend to stay
 * there. Each rank moves to its own CPU once and gets its whole set back
 * at once, so that the scheduler may still move it later. */
void px_boot_spread(void)
{
    cpu_set_t set, one;
    if (px_machine_start_cpu < 0 || sched_getaffinity(0, sizeof(set), &set) != 0)
        return;
    CPU_ZERO(&one);
    CPU_SET(px_machine_start_cpu, &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0) { /* moves before returning */
        sched_setaffinity(0, sizeof(set), &set);
        px_debug("boot", "started on CPU %d", px_machine_start_cpu);
    }
}

/* A rank's threads that wait in MPI take turns under the library's lock,
 * one polling at a time. Free to move, the polling threads of two ranks
 * sometimes stay on one core for a whole run and take turns at its time
 * slices, while the other core runs threads that wake and sleep again
 * (docs/architecture.md, "Progress and placement"). With PX_BIND=spread,
 * when the ranks of this machine fit its CPUs and the launcher left the
 * process all of them, the i-th rank is bound to the i-th of as many equal
 * shares of its CPUs as there are ranks. The calling thread is bound, and
 * the threads it creates from then on inherit its set. */
void px_boot_share_cpus(void)
{
    cpu_set_t set, share;
    int R = px_machine.ranks, i = px_machine.index;
    if (strcmp(px_params.bind, "spread") || R < 2 || px_machine.oversub ||
        sched_getaffinity(0, sizeof(set), &set) != 0 ||
        CPU_COUNT(&set) != sysconf(_SC_NPROCESSORS_ONLN))
        return;
    int n = CPU_COUNT(&set), lo = i * n / R, hi = (i + 1) * n / R, k = 0;
    CPU_ZERO(&share);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            if (k >= lo && k < hi)
                CPU_SET(c, &share);
            k++;
        }
    if (sched_setaffinity(0, sizeof(share), &share) != 0)
        px_warn("boot", "cannot bind the rank to its %d CPUs: %s", hi - lo, strerror(errno));
    else
        px_debug("boot", "threads: bound to %d CPUs from the %d-th (rank %d of %d here)", hi - lo,
                 lo, i, R);
}
