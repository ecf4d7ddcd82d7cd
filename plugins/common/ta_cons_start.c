/* SPDX-License-Identifier: GPL-2.0-or-later */
/* See ta_cons_start.h. */
#include "ta_cons_start.h"

int64_t ta_cons_batched_start(const int64_t *ends, size_t n, int64_t fits_at, int window_linear)
{
	const int64_t first_window = 30;
	int64_t window = first_window, barrier;
	size_t i = 0;

	if (!ends || !n)
		return fits_at;
	/* cons_tres aligns the windows on the first end: the next multiple of 30 s after it. */
	barrier = ends[0] + (first_window - ends[0] % first_window);
	while (i < n) {
		int64_t last;

		do
			last = ends[i++];
		while (i < n && ends[i] <= barrier + window);
		if (last >= fits_at)
			return last;
		if (i == n)
			break;
		if (window_linear > 0) {
			/* as many steps as reach the next end, which lies beyond the window (no loop) */
			int64_t short_by = ends[i] - barrier - window;

			window += window_linear * ((short_by + window_linear - 1) / window_linear);
		} else {
			do
				window *= 2;
			while (ends[i] > barrier + window && window < ((int64_t)1 << 40)); /* no overflow */
		}
	}
	return fits_at;
}
