! The Fortran half of fmix (tests/mpi/fmix_c.c, tests/mpi/fortran.sh): a C
! program that calls these subroutines, so that messages cross between the
! C and the Fortran bindings in both directions (use mpi; Open MPI's
! bindings convert the handles and call the C PMPI_* functions).
!
! fmix_fsend: send n integers k*1000+i (i = 1..n) with MPI_Send, or with
!   MPI_Isend + MPI_Wait when nb /= 0.
! fmix_frecv: receive up to cap integers with MPI_Irecv + MPI_Wait (or
!   MPI_Iprobe until found + MPI_Recv when probe /= 0) and hand back the
!   status fields, the element count and the sum of what was received.
subroutine fmix_fsend(fcomm, dest, tag, n, k, nb) bind(c, name='fmix_fsend')
  use mpi
  use iso_c_binding, only: c_int
  implicit none
  integer(c_int), value :: fcomm, dest, tag, n, k, nb
  integer :: buf(n), i, ierr, rq
  do i = 1, n
    buf(i) = k * 1000 + i
  end do
  if (nb /= 0) then
    call MPI_Isend(buf, n, MPI_INTEGER, dest, tag, fcomm, rq, ierr)
    call MPI_Wait(rq, MPI_STATUS_IGNORE, ierr)
  else
    call MPI_Send(buf, n, MPI_INTEGER, dest, tag, fcomm, ierr)
  end if
end subroutine fmix_fsend

subroutine fmix_frecv(fcomm, src, tag, cap, probe, out) bind(c, name='fmix_frecv')
  use mpi
  use iso_c_binding, only: c_int
  implicit none
  integer(c_int), value :: fcomm, src, tag, cap, probe
  integer(c_int), intent(out) :: out(5) ! source, tag, count, sum, ierr
  integer :: buf(cap + 2), status(MPI_STATUS_SIZE), ierr, rq, cnt, i
  logical :: flag
  buf = -7
  if (probe /= 0) then
    flag = .false.
    do while (.not. flag)
      call MPI_Iprobe(src, tag, fcomm, flag, status, ierr)
    end do
    call MPI_Recv(buf, cap, MPI_INTEGER, status(MPI_SOURCE), status(MPI_TAG), fcomm, status, ierr)
  else
    call MPI_Irecv(buf, cap, MPI_INTEGER, src, tag, fcomm, rq, ierr)
    call MPI_Wait(rq, status, ierr)
  end if
  call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
  out(1) = status(MPI_SOURCE)
  out(2) = status(MPI_TAG)
  out(3) = cnt
  out(4) = 0
  do i = 1, cnt
    out(4) = out(4) + buf(i) * i
  end do
  ! nothing written past the received elements
  do i = cnt + 1, cap + 2
    if (buf(i) /= -7) out(4) = -1
  end do
  out(5) = ierr
end subroutine fmix_frecv
