/* Recursive-doubling exclusive scan: like the scan, but a rank's result
 * collects only the partial results of lower ranks (px_coll_scan_doubling,
 * scan/scan_recursive_doubling.c). Any operation. */
#include "../coll_impl.h"

PX_COLL_BUILDER(px_coll_exscan_recursive_doubling) { return px_coll_scan_doubling(s, a, c, 0); }
