/* tiles.h: chapter 03 keeps chapter 02's tiles, threads and shared-memory layout (Q_i, K_j, V_j, P_ij, K_j as
 * stored in HBM); it changes the loop order around them. One file, so that the two cannot drift. */
#include "../02_flash_v1/tiles.h"
