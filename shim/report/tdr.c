/* Measurement helpers shared by the shim and the report writer. */
#include "tdr.h"
#include "tdr_site.h"

#include <stdlib.h>

int tdr_episode_add(tdr_rank *r, uint32_t episode, double t_detect)
{
    if (r->nepisodes == r->capepisodes) {
        size_t cap = r->capepisodes ? 2 * r->capepisodes : 8;
        tdr_episode *e = realloc(r->episodes, cap * sizeof *e);
        if (!e)
            return -1;
        r->episodes = e;
        r->capepisodes = cap;
    }
    r->episodes[r->nepisodes++] = (tdr_episode){episode, t_detect, r->t_last_passive, 0};
    return 0;
}

void tdr_episode_unsafe(tdr_rank *r, uint32_t episode)
{
    for (size_t i = r->nepisodes; i-- > 0;)
        if (r->episodes[i].episode == episode) {
            r->episodes[i].unsafe = 1;
            return;
        }
}

void tdr_unreceived_add(tdr_rank *r, int tag, uint64_t bytes)
{
    for (int i = 0; i < r->nunrecv_tags; i++) {
        if (r->unrecv_tags[i].tag == tag) {
            r->unrecv_tags[i].messages++;
            r->unrecv_tags[i].bytes += bytes;
            return;
        }
    }
    if (r->nunrecv_tags == TDR_UNRECV_TAGS) {
        r->unrecv_tags_other++;
        return;
    }
    r->unrecv_tags[r->nunrecv_tags++] = (struct tdr_tagcount){tag, 1, bytes};
}

void tdr_violation_add(tdr_rank *r, int tag, uint64_t bytes)
{
    int i = 0;
    while (i < r->nviol_tags && r->viol_tags[i].tag != tag)
        i++;
    if (i == r->nviol_tags) {
        if (i == TDR_VIOL_TAGS) {
            r->viol_tags_other++;
            return;
        }
        r->viol_tags[r->nviol_tags++] = (struct tdr_violtag){tag, 0, 0, 0};
    }
    r->viol_tags[i].messages++;
    r->viol_tags[i].empty += bytes == 0;
    r->viol_tags[i].bytes += bytes;
}

void tdr_rank_free(tdr_rank *r)
{
    free(r->episodes);
    r->episodes = NULL;
    r->nepisodes = r->capepisodes = 0;
    tdr_sites_free(r->sites);
    r->sites = NULL;
}
