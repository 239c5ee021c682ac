/*
 * The launch check (tds_preload.c): are all ranks of the job under tdshim?
 */
#ifndef TDS_PRELOAD_H
#define TDS_PRELOAD_H



/* ---- launch check (tds_preload.c) ----
 * Are all ranks of the job under tdshim? Asked before any communication on
 * MPI_COMM_WORLD, through the MPI name service only. 1: yes (or the check
 * is off or impossible), go on; 0: no, and TDSHIM_MIXED=native: the rank
 * passes every call through; with TDSHIM_MIXED=stop it does not return. */
int tds_preload_check(void);
void tds_preload_unpublish(void); /* at MPI_Finalize */

#endif
