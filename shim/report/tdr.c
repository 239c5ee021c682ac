/* Measurement helpers shared by the shim and the report writer. */
#include "tdr.h"
#include "tdr_site.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tdr_episode_add(tdr_rank *r, uint32_t episode, double t_detect)
{
    const size_t keep = TDR_EP_HEAD + TDR_EP_TAIL;
    tdr_episode ne = {episode, t_detect, r->t_last_passive, 0, ""};
    if (r->ep_total >= keep) {
        /* the ring: the oldest of the last TDR_EP_TAIL gives way. A signal
         * handler reads at most the last TDR_SIG_EPISODES (< TDR_EP_TAIL),
         * never this slot, which counts as one once ep_total moves */
        r->episodes[TDR_EP_HEAD + (size_t)((r->ep_total - TDR_EP_HEAD) % TDR_EP_TAIL)] = ne;
        atomic_signal_fence(memory_order_seq_cst);
        r->ep_total++;
        return 0;
    }
    /* The whole table at the first episode, never grown: this runs on the
     * notification's path (tds_announce records the episode, then tells
     * the program), where doubling it cost the copy of every entry and, from
     * 512 of them (120 KB), a fresh mapping's page faults and the old one's
     * unmapping: 730-1,060 us at work_steal's 513th phase, 270-330 at the
     * 257th (issue 37: a fifth of tdshim's extra wall time in 1,000 phases
     * at --work-us 0; bench/RESULTS.md, "Where work_steal's stop goes").
     * The mapping's pages cost nothing until written, one fault per 17
     * entries as the table fills (5,120 entries of 232 bytes: 1.2 MB of
     * address space a rank). A signal handler may read the table at any
     * point (tdr_write_partial): it is published before an entry is
     * counted, and an entry is counted once written. */
    if (r->nepisodes == r->capepisodes) {
        tdr_episode *e = malloc(keep * sizeof *e);
        if (!e)
            return -1;
        atomic_signal_fence(memory_order_seq_cst);
        r->episodes = e;
        r->capepisodes = keep;
        atomic_signal_fence(memory_order_seq_cst);
    }
    r->episodes[r->nepisodes] = ne;
    atomic_signal_fence(memory_order_seq_cst);
    r->nepisodes++;
    r->ep_total++;
    return 0;
}

void tdr_episode_unsafe(tdr_rank *r, uint32_t episode, unsigned kinds, const char *why)
{
    for (size_t i = r->nepisodes; i-- > 0;)
        if (tdr_episode_at(r, i)->episode == episode) {
            tdr_episode *e = (tdr_episode *)tdr_episode_at(r, i);
            if (!e->unsafe_why[0])
                snprintf(e->unsafe_why, sizeof e->unsafe_why, "%s", why);
            e->unsafe |= kinds ? kinds : 1u;
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
        r->viol_tags[r->nviol_tags++] = (struct tdr_violtag){tag, 0, 0, 0, bytes, bytes, 0};
    }
    if (bytes < r->viol_tags[i].min_bytes) {
        r->viol_tags[i].min_bytes = bytes;
        r->viol_tags[i].min_messages = 0;
    }
    r->viol_tags[i].min_messages += bytes == r->viol_tags[i].min_bytes;
    if (bytes > r->viol_tags[i].max_bytes)
        r->viol_tags[i].max_bytes = bytes;
    r->viol_tags[i].messages++;
    r->viol_tags[i].empty += bytes == 0;
    r->viol_tags[i].bytes += bytes;
}

void tdr_rank_free(tdr_rank *r)
{
    free(r->episodes);
    r->episodes = NULL;
    r->nepisodes = r->capepisodes = 0;
    r->ep_total = 0;
    tdr_sites_free(r->sites);
    r->sites = NULL;
    free(r->sig_buf);
    r->sig_buf = NULL;
    r->sig_cap = 0;
}
