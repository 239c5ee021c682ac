/*
 * A driver of Tachyon (Debian's libtachyon-openmpi-0-dev), the parallel
 * ray tracer, for tests/mpi/tachyon.sh: the MPI traffic is Tachyon's own.
 * Its ranks render interleaved scanlines and send them to rank 0 through
 * persistent requests (MPI_Send_init, MPI_Recv_init), started again for
 * every frame (MPI_Start, MPI_Startall) and completed by MPI_Testsome and
 * MPI_Waitall, freed at the end (MPI_Request_free); this program only
 * builds a scene and prints a checksum of each frame.
 *
 * tachyscene FRAMES RES: 40 spheres (some translucent) over a plane, one
 * light, shadows, rendered FRAMES times at RES x RES from a camera that
 * moves around the scene; rank 0 prints one line per frame with the FNV-1a
 * hash of its 24-bit image (the same at any rank count: Tachyon's ranks
 * trace the same rays).
 */
#include <mpi.h>
#include <tachyon.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 0, res = argc > 2 ? atoi(argv[2]) : 0;
    int rank = rt_initialize(&argc, &argv); /* MPI_Init */
    if (rank < 0) {
        fprintf(stderr, "tachyscene: rt_initialize failed\n");
        return 1;
    }
    if (frames < 1 || frames > 1000 || res < 8 || res > 4096) {
        if (rank == 0)
            fprintf(stderr, "usage: tachyscene FRAMES(1-1000) RES(8-4096)\n");
        rt_finalize();
        return 2;
    }
    SceneHandle s = rt_newscene();
    rt_resolution(s, res, res);
    rt_verbose(s, 0);
    rt_set_numthreads(s, 1);
    rt_background(s, rt_color(0.1, 0.1, 0.2));
    apitexture t;
    memset(&t, 0, sizeof t);
    t.col = rt_color(1, 1, 1);
    t.ambient = 0.1, t.diffuse = 0.8, t.specular = 0.2, t.opacity = 1.0, t.shadowcast = 1;
    t.scale = rt_vector(1, 1, 1);
    rt_light(s, rt_texture(s, &t), rt_vector(4, 6, -8), 0.5);
    for (int i = 0; i < 40; i++) {
        t.col = rt_color(0.3 + 0.7 * ((i * 37) % 11) / 10.0, 0.3 + 0.7 * ((i * 53) % 7) / 6.0,
                         0.3 + 0.7 * ((i * 17) % 5) / 4.0);
        t.specular = 0.1 * (i % 4);
        t.opacity = i % 9 == 0 ? 0.6 : 1.0;
        rt_sphere(s, rt_texture(s, &t), rt_vector(-3 + 0.15 * i, sin(i * 0.7), 2 + cos(i * 0.4) * 2),
                  0.3 + 0.02 * (i % 5));
    }
    t.col = rt_color(0.8, 0.8, 0.8);
    t.specular = 0.2, t.opacity = 1.0;
    rt_plane(s, rt_texture(s, &t), rt_vector(0, -1.5, 0), rt_vector(0, 1, 0));
    unsigned char *img = malloc((size_t)res * res * 3);
    if (!img) {
        fprintf(stderr, "tachyscene: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    rt_rawimage_rgb24(s, img);
    for (int f = 0; f < frames; f++) {
        double a = f * 0.3;
        rt_camera_setup(s, 1.0, 1.0, 0, 6, rt_vector(6 * sin(a), 1.5, -8 * cos(a)), rt_vector(-sin(a), -0.1, cos(a)),
                        rt_vector(0, 1, 0));
        rt_renderscene(s);
        if (rank == 0) {
            unsigned long h = 1469598103934665603UL;
            for (size_t b = 0; b < (size_t)res * res * 3; b++)
                h = (h ^ img[b]) * 1099511628211UL;
            printf("frame %d %dx%d fnv=%016lx\n", f, res, res, h);
        }
    }
    rt_deletescene(s);
    free(img);
    rt_finalize(); /* MPI_Finalize */
    return 0;
}
