! Device buffers from a Fortran program (mpif.h, use mpi or use mpi_f08, by
! FORTRAN_BINDING 1, 2 or 3): Sendrecv, Isend/Irecv/Waitall and Allreduce on
! device arrays of 4 KiB (eager) and 1 MiB (rendezvous) between two ranks,
! every element checked on the host. The Fortran bindings call cumpi's
! PMPI_* entry points. Prints "N passed, M failed" and fails when M > 0.
program fortran_device
#if FORTRAN_BINDING == 3
  use mpi_f08
#elif FORTRAN_BINDING == 2
  use mpi
#endif
  use, intrinsic :: iso_c_binding
  use cumpi_test_device
  implicit none
#if FORTRAN_BINDING == 1
  include 'mpif.h'
#endif
#if FORTRAN_BINDING == 3
  type(MPI_Status) :: status
  type(MPI_Request) :: requests(2)
#else
  integer :: status(MPI_STATUS_SIZE)
  integer :: requests(2)
#endif
  integer :: ierr, rank, size, peer, passed, failed, round, n, i
  integer :: counts(2) = [1024, 262144]
  integer(c_int), allocatable, target :: host(:), expected(:)
  integer(c_int), pointer, contiguous :: sent(:), received(:)
  type(c_ptr) :: sent_address, received_address
  integer(c_size_t) :: bytes

  call cumpi_test_init_device()
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  peer = 1 - rank
  passed = 0
  failed = 0
  do round = 1, 2
    n = counts(round)
    bytes = int(n, c_size_t) * 4_c_size_t
    allocate(host(n), expected(n))
    sent_address = cumpi_test_device_alloc(bytes)
    received_address = cumpi_test_device_alloc(bytes)
    call c_f_pointer(sent_address, sent, [n])
    call c_f_pointer(received_address, received, [n])
    do i = 1, n
      host(i) = rank * 1000000 + i
    end do
    call cumpi_test_device_upload(sent_address, c_loc(host), bytes)

    ! Sendrecv: the peer's elements arrive.
    call MPI_Sendrecv(sent, n, MPI_INTEGER, peer, 1, received, n, MPI_INTEGER, peer, 1, MPI_COMM_WORLD, &
                      status, ierr)
    do i = 1, n
      expected(i) = peer * 1000000 + i
    end do
    call check(ierr == MPI_SUCCESS .and. same(received_address), 'MPI_Sendrecv')

    ! Isend, Irecv, Waitall.
    call MPI_Irecv(received, n, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, requests(1), ierr)
    call MPI_Isend(sent, n, MPI_INTEGER, peer, 2, MPI_COMM_WORLD, requests(2), ierr)
    call MPI_Waitall(2, requests, MPI_STATUSES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS .and. same(received_address), 'MPI_Isend/MPI_Irecv/MPI_Waitall')

    ! Allreduce: the sum over both ranks.
    call MPI_Allreduce(sent, received, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    do i = 1, n
      expected(i) = 1000000 + 2 * i
    end do
    call check(ierr == MPI_SUCCESS .and. same(received_address), 'MPI_Allreduce')

    call cumpi_test_device_free(sent_address)
    call cumpi_test_device_free(received_address)
    deallocate(host, expected)
  end do
  call MPI_Allreduce(MPI_IN_PLACE, failed, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, passed, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(i0, " passed, ", i0, " failed")', passed, failed
  call MPI_Finalize(ierr)
  if (failed > 0) error stop 1

contains

  ! The device array at `address` holds `expected`, every element.
  logical function same(address)
    type(c_ptr), intent(in) :: address
    integer(c_int), allocatable, target :: back(:)
    allocate(back(n))
    back = -1
    call cumpi_test_device_download(c_loc(back), address, bytes)
    same = all(back == expected)
    if (.not. same) then
      print '("rank ", i0, ": first wrong element ", i0, ": ", i0, " expected ", i0)', rank, &
            findloc(back == expected, .false., 1), back(findloc(back == expected, .false., 1)), &
            expected(findloc(back == expected, .false., 1))
    end if
  end function same

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      print '("FAILED [rank ", i0, "] ", a, " of ", i0, " integers")', rank, what, n
    end if
  end subroutine check

end program fortran_device
