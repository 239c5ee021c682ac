! ftoken: examples/token_ring.c in Fortran, for tests/mpi/fortran.sh
! (README "Stacking with other PMPI tools and Fortran"). Built three
! times from this file: include 'mpif.h' (-DUSE_MPIFH), use mpi, and
! use mpi_f08 (-DUSE_F08: handle types and status components).
!
!   ftoken STYLE TOKENS NOTIFY_TAG
!
! Token t starts on rank mod(t, P); at each step its owner works a little,
! then the token moves on to a pseudo-random rank with probability 0.9
! (at most 60 steps) or dies. No rank knows when the last token died: the
! phase ends with tdshim's notification (TDSHIM_NOTIFY=tag:NOTIFY_TAG).
! Every rank replays all token paths to know how many tokens it must
! receive, and checks every message (source, tag, count, contents).
!
! STYLE probe: MPI_Iprobe loop, MPI_Recv, MPI_Send.
! STYLE test:  a standing MPI_Irecv polled with MPI_Test (request and
!              status through the Fortran bindings), MPI_Isend + MPI_Wait.
!
! Rank 0 prints "RESULT example=ftoken ranks=P steps=S expected=E
! received=R notified=N ok" (or FAIL, exit status 1).
program ftoken
#if defined(USE_MPIFH)
  implicit none
  include 'mpif.h'
#elif defined(USE_F08)
  use mpi_f08
  implicit none
#else
  use mpi
  implicit none
#endif
#ifdef USE_F08
#define TAG_OF(s) s%MPI_TAG
#define SOURCE_OF(s) s%MPI_SOURCE
  type(MPI_Status) :: status
  type(MPI_Request) :: rq, sq
#else
#define TAG_OF(s) s(MPI_TAG)
#define SOURCE_OF(s) s(MPI_SOURCE)
  integer :: status(MPI_STATUS_SIZE), rq, sq
#endif
  integer :: ierr, rank, nprocs, ntok, ntag, t, k, owner, nx, flag_i
  integer :: msg(2), buf(2), cnt
  integer(8) :: steps_truth, steps_mine, steps_done, expect_recv, recvd, totals(4), sums(4)
  logical :: flag, notified, good
  character(len=16) :: style, arg

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  if (command_argument_count() /= 3) then
    if (rank == 0) print '(a)', 'usage: ftoken probe|test TOKENS NOTIFY_TAG'
    call MPI_Finalize(ierr)
    stop 2
  end if
  call get_command_argument(1, style)
  call get_command_argument(2, arg)
  read (arg, *) ntok
  call get_command_argument(3, arg)
  read (arg, *) ntag

  ! ground truth: every token's path
  steps_truth = 0
  steps_mine = 0
  expect_recv = 0
  do t = 0, ntok - 1
    owner = mod(t, nprocs)
    k = 0
    do while (owner >= 0)
      steps_truth = steps_truth + 1
      if (owner == rank) steps_mine = steps_mine + 1
      nx = next_owner(t, k)
      if (nx == rank) expect_recv = expect_recv + 1
      owner = nx
      k = k + 1
    end do
  end do

  good = .true.
  recvd = 0
  notified = .false.
  rq = MPI_REQUEST_NULL
  steps_done = 0
  do t = rank, ntok - 1, nprocs
    call step(t, 0)
  end do
  do while (.not. notified)
    if (style == 'probe') then
      call MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, flag, status, ierr)
      if (.not. flag) cycle
      if (TAG_OF(status) == ntag) then
        call MPI_Recv(buf, 1, MPI_INTEGER, SOURCE_OF(status), ntag, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
        notified = .true.
        cycle
      end if
      call MPI_Recv(buf, 2, MPI_INTEGER, SOURCE_OF(status), TAG_OF(status), MPI_COMM_WORLD, status, ierr)
    else
      if (rq == MPI_REQUEST_NULL) &
        call MPI_Irecv(buf, 2, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, rq, ierr)
      call MPI_Test(rq, flag, status, ierr)
      if (.not. flag) cycle
      if (rq /= MPI_REQUEST_NULL) good = .false.
      if (TAG_OF(status) == ntag) then
        notified = .true.
        cycle
      end if
    end if
    call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
    if (TAG_OF(status) /= 1 .or. cnt /= 2) then
      print '(a,i0,a,i0,a,i0)', 'ftoken: rank ', rank, ': unexpected message, tag ', TAG_OF(status), ' count ', cnt
      good = .false.
      exit
    end if
    if (next_owner(buf(1), buf(2) - 1) /= rank .or. &
        SOURCE_OF(status) /= owner_at(buf(1), buf(2) - 1)) then
      print '(a,i0,a,i0,a,i0)', 'ftoken: rank ', rank, ': wrong token ', buf(1), ' step ', buf(2)
      good = .false.
    end if
    recvd = recvd + 1
    call step(buf(1), buf(2))
  end do
  if (rq /= MPI_REQUEST_NULL) then
    call MPI_Cancel(rq, ierr)
    call MPI_Wait(rq, MPI_STATUS_IGNORE, ierr)
  end if
  if (recvd /= expect_recv .or. steps_done /= steps_mine) good = .false.

  totals = (/ steps_done, steps_mine, recvd, merge(0_8, 1_8, good) /)
  call MPI_Reduce(totals, sums, 4, MPI_INTEGER8, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    good = sums(4) == 0 .and. sums(1) == sums(2) .and. sums(2) == steps_truth
    flag_i = 0
    if (good) flag_i = 1
    print '(a,a,i0,a,i0,a,i0,a,i0,a,a)', 'RESULT example=ftoken', ' ranks=', nprocs, ' steps=', sums(1), &
      ' expected=', sums(2), ' received=', sums(3), ' ', trim(merge('ok  ', 'FAIL', good))
  end if
  call MPI_Bcast(flag_i, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (flag_i /= 1) stop 1

contains

  ! a pseudo-random number in [0, 2**31-1) from (a, b, c): Park-Miller steps
  integer(8) function mix(a, b, c)
    integer, intent(in) :: a, b, c
    integer(8), parameter :: m = 2147483647_8
    integer :: i
    mix = mod(int(a, 8) * 7919_8 + int(b, 8) * 104729_8 + int(c, 8) * 1299709_8 + 12345_8, m)
    do i = 1, 3
      mix = mod(48271_8 * mix + 11_8, m)
    end do
  end function mix

  ! the rank the token goes to after step k, or -1 if it dies there
  integer function next_owner(tok, k)
    integer, intent(in) :: tok, k
    if (k + 1 >= 60 .or. mod(mix(tok, k, 1), 100_8) >= 90) then
      next_owner = -1
    else
      next_owner = int(mod(mix(tok, k, 2), int(nprocs, 8)))
    end if
  end function next_owner

  ! the rank that executes step k of the token
  integer function owner_at(tok, k)
    integer, intent(in) :: tok, k
    integer :: j
    owner_at = mod(tok, nprocs)
    do j = 0, k - 1
      owner_at = next_owner(tok, j)
    end do
  end function owner_at

  subroutine step(tok, k)
    integer, intent(in) :: tok, k
    integer :: dest, j
    real(8) :: x
    x = 0
    do j = 1, 2000
      x = x + sqrt(real(j + tok, 8))
    end do
    if (x < 0) print *, x
    steps_done = steps_done + 1
    dest = next_owner(tok, k)
    if (dest < 0) return
    msg(1) = tok
    msg(2) = k + 1
    if (style == 'probe') then
      call MPI_Send(msg, 2, MPI_INTEGER, dest, 1, MPI_COMM_WORLD, ierr)
    else
      call MPI_Isend(msg, 2, MPI_INTEGER, dest, 1, MPI_COMM_WORLD, sq, ierr)
      call MPI_Wait(sq, MPI_STATUS_IGNORE, ierr)
    end if
  end subroutine step
end program ftoken
