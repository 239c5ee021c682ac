/* include/tdshim.h: the application API, served by the process state. */
#include "config.h"

#define TDSHIM_BUILDING 1
#include "tdshim.h"
#include "tds_progress.h"

void tdshim_set_passive(void)
{
    if (!tds.on || tds_inside || tds.cf.idle != TDS_IDLE_API)
        return;
    tds_inside = 1;
    tds_lock();
    tds_set_passive();
    tds_unlock();
    tds_inside = 0;
}

int tdshim_terminated(void)
{
    tds_lock_coll(); /* a query: the calling thread is not counted as one that communicates */
    int e = (int)td_episode(&tds.core);
    tds_unlock();
    return e;
}

const char *tdshim_version(void)
{
    return PACKAGE_VERSION;
}
